// "Leave the match" and "Take my seat back" for a person seated at a running match.  Leaving
// hands the seat to the game's stand-in while someone else still plays (a person, or a bot
// that is not built in), and ends the match when nobody does; letting several requests run
// out makes the person away: the stand-in plays, and when nobody else plays either the match
// ends after a grace unless they take their seat back.  Every view says who is away (`away`),
// who still plays (`present`) and when an abandoned match will end (`abandon_at`), so the
// dialog and the banner follow the server.
'use strict';
(function () {
  const leave = document.getElementById('leave-match');
  const banner = document.getElementById('away-banner');
  if (!leave || !banner) return;
  const note = banner.querySelector('.abandon-note');
  leave.addEventListener('click', () => {
    // Worded from the newest view: does anyone else still play at this table?
    const present = (Arena.lastMsg && Arena.lastMsg.present) || [];
    const alone = !present.some((seat) => seat !== Arena.data.my_seat);
    if (window.confirm(alone ? leave.dataset.confirmAlone : leave.dataset.confirmOthers)) Arena.send({type: 'leave'});
  });
  banner.querySelector('button').addEventListener('click', () => Arena.send({type: 'back'}));
  Arena.viewHooks.push((msg) => {
    const over = !!(msg.view && msg.view.terminal);
    const away = (msg.away || []).includes(Arena.data.my_seat) && !over;
    banner.hidden = !away;
    leave.hidden = away || over;
    const minutes = msg.abandon_at && msg.ts ? Math.max(1, Math.ceil((msg.abandon_at - msg.ts) / 60)) : null;
    note.hidden = !(away && minutes);
    if (minutes) note.textContent = `Nobody else plays here: the match ends in ${minutes} min unless you take your seat back.`;
  });
  Arena.endHooks.push(() => { banner.hidden = true; leave.hidden = true; });
})();
