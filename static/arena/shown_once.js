// A secret shown once (a bot's key, a personal API token): the page opens on it (focused and
// scrolled into view, whatever the address's #fragment says), and its Copy button puts it on
// the clipboard.  Where the Clipboard API is not offered (a plain-http address other than
// localhost is not a secure context) the text is selected and copied the old way; if even that
// fails it stays selected for the person to copy.
'use strict';

(function () {
  function select(node) {
    const range = document.createRange();
    range.selectNodeContents(node);
    const selection = window.getSelection();
    selection.removeAllRanges();
    selection.addRange(range);
  }

  async function copy(button) {
    const node = document.getElementById(button.dataset.copy);
    const text = node.textContent.trim();
    let done = false;
    try {
      if (navigator.clipboard && window.isSecureContext) {
        await navigator.clipboard.writeText(text);
        done = true;
      }
    } catch (e) { /* permission refused: the old way below */ }
    if (!done) {
      select(node);
      try { done = document.execCommand('copy'); } catch (e) { done = false; }
    }
    button.textContent = done ? 'Copied ✓' : 'Selected: press Ctrl+C';
    button.closest('.key-once').querySelector('.copy-status').textContent = done ? 'Copied to the clipboard.' : '';
  }

  document.querySelectorAll('button[data-copy]').forEach((b) => b.addEventListener('click', () => copy(b)));
  const box = document.querySelector('.key-once');
  if (!box) return;
  // The register form posts to /bots/#register (its errors show there); with a secret on the
  // page, the secret comes first.  Drop the fragment, so the browser does not scroll back to it.
  if (location.hash) history.replaceState(null, '', location.pathname + location.search);
  const show = () => { box.focus({preventScroll: true}); box.scrollIntoView({block: 'start'}); };
  show();
  window.addEventListener('load', show, {once: true});  // after the browser's own scroll to a fragment
})();
