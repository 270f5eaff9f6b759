// Lobby and history pages that keep themselves current: every few seconds, while the tab is
// visible, the page is fetched again and every element marked `data-live="<key>"` is replaced
// by its namesake from the fresh copy (forms and anything else stay as they are, so nothing a
// visitor is typing is lost).  Polling rather than a WebSocket: these pages are read by many
// and change a few times a minute, and a plain GET is cached by nothing and costs one query set.
'use strict';
(function () {
  const PERIOD_MS = 5000;
  let busy = false;
  async function refresh() {
    if (busy || document.hidden) return;
    busy = true;
    try {
      const resp = await fetch(location.href, {headers: {'X-Requested-With': 'live-list'}, credentials: 'same-origin'});
      if (!resp.ok) return;
      const fresh = new DOMParser().parseFromString(await resp.text(), 'text/html');
      for (const old of document.querySelectorAll('[data-live]')) {
        const next = fresh.querySelector(`[data-live="${CSS.escape(old.dataset.live)}"]`);
        if (next && next.innerHTML !== old.innerHTML) old.replaceWith(document.importNode(next, true));
      }
    } catch (e) {
      // offline for a moment: try again next time
    } finally {
      busy = false;
    }
  }
  setInterval(refresh, PERIOD_MS);
  document.addEventListener('visibilitychange', refresh);
})();
