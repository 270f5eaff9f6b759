// "Leave the match" and "Take my seat back" for a person seated at a running match.  Leaving
// (or letting several requests run out) hands the seat to the game's stand-in, which plays
// at once; every view lists who is away (`away`), so the banner follows the server.
'use strict';
(function () {
  const leave = document.getElementById('leave-match');
  const banner = document.getElementById('away-banner');
  if (!leave || !banner) return;
  leave.addEventListener('click', () => {
    if (window.confirm(leave.dataset.confirm)) Arena.send({type: 'leave'});
  });
  banner.querySelector('button').addEventListener('click', () => Arena.send({type: 'back'}));
  Arena.viewHooks.push((msg) => {
    const away = (msg.away || []).includes(Arena.data.my_seat) && !(msg.view && msg.view.terminal);
    banner.hidden = !away;
    leave.hidden = away || !!(msg.view && msg.view.terminal);
  });
})();
