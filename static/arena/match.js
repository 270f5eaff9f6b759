// The match page client, the same for every game: the WebSocket with versioned views and
// resync, the countdown, "your turn" in the tab title and a beep while the tab is in the
// background, the end of the match however it ends (`match.over`), and the replay of a
// finished match (steps, a slider, jumps to the next round, game or trick, speeds, the step in
// the address).  The game's own script registers `Arena.games[slug] = {render(view, ctx)}` to
// draw the table; its status line (whose turn it is) carries `data-testid="status"`, which
// this page replaces by the notice when a match is stopped before its end, and the seat on
// turn has the class `on-turn` (its badge saying so: a plain `.badge` or `.badge.turn`), which
// it then takes away.
'use strict';

// Replay frames per request (the API's most, games/arena/play/replay.py MAX_FRAMES).
const REPLAY_PAGE = 500;
// Requests that silence answers (the Liar's Dice challenge window: the bid stands), so not
// announced as "your turn".
const OPTIONAL_REQUESTS = ['challenge_window'];
// localStorage key: "off" when the person switched the "your turn" sound off.
const SOUND_KEY = 'arena.turnSound';
// Happenings that end a round, a game (a Jass deal) or a trick: where the replay can jump to.
const REPLAY_MARKS = {round_over: 'round', deal_over: 'game', trick_over: 'trick'};
// "Play" shows one step this often at 1x (milliseconds); the speed control divides it.
const PLAY_STEP_MS = 900;
// localStorage key: the replay speed last chosen ("0.5", "1", "2", "4").
const SPEED_KEY = 'arena.replaySpeed';

// The replay step named in the page's address (`?step=N`), or null: a link to a move opens
// the replay there.
function stepInAddress() {
  const step = new URLSearchParams(location.search).get('step');
  return step !== null && /^\d{1,9}$/.test(step) ? Number(step) : null;
}

const Arena = {
  games: {},
  viewHooks: [],  // functions called with every live view message (e.g. static/arena/away.js)
  endHooks: [],   // functions called with the match.over message once the match ended

  start(data) {
    this.data = data;
    this.version = 0;
    this.board = document.getElementById('board');
    this.actions = document.getElementById('actions');
    this.logEl = document.getElementById('log');
    this.deadline = null;
    this.request = null;
    this.lastMsg = null;
    this.answered = null;  // {version, action}: sent, waiting for the next view
    this.ended = null;     // the match.over message once the match ended while on this page
    this.forced = {};      // "game/round" -> forced answers that ended that round
    this.retry = 500;
    this.setupTurnNotice();
    if (data.status === 'finished' || data.status === 'aborted') {
      this.startReplay();
    }
    this.connect();
    setInterval(() => this.tick(), 250);
  },

  game() { return this.games[this.data.game]; },

  connect() {
    const proto = location.protocol === 'https:' ? 'wss' : 'ws';
    const ws = new WebSocket(`${proto}://${location.host}/ws/matches/${this.data.match}/`);
    this.ws = ws;
    ws.onopen = () => { this.retry = 500; this.setConn(true); };
    ws.onmessage = (e) => this.onMessage(JSON.parse(e.data));
    ws.onclose = () => {
      this.setConn(false);
      if (this.data.status === 'running') {  // reconnect; the server resends the newest view
        setTimeout(() => this.connect(), this.retry);
        this.retry = Math.min(this.retry * 2, 8000);
      }
    };
  },

  setConn(ok) {
    document.body.classList.toggle('disconnected', !ok && this.data.status === 'running');
  },

  send(msg) {
    if (this.ws && this.ws.readyState === WebSocket.OPEN) this.ws.send(JSON.stringify(msg));
  },

  onMessage(msg) {
    if (msg.type === 'match.view') {
      // Each view is the whole table.  A gap in versions is the server skipping views this tab
      // had no time for (it sends only a few ahead of the last ack): the newest is enough.
      if (msg.version > this.version) {  // else a duplicate or an older view
        this.version = msg.version;
        this.showView(msg);
      }
    } else if (msg.type === 'match.over') {
      this.showEnd(msg);
    } else if (msg.type === 'match.final') {
      if (this.ended) return;  // the end is on screen; the replay is a click away
      if (this.data.status === 'running') { location.reload(); return; }
      this.finalMsg = msg;
      if (!this.replay) this.showView({view: msg.view, happenings: [], answers: null, final: true});
    } else if (msg.type === 'match.error') {
      this.flash(msg.message);
      if (this.answered) {  // the move was refused: offer the controls again
        this.answered = null;
        this.rerender();
      }
    } else if (msg.type === 'table.update') {
      if (this.ended) return;  // showEnd has said everything
      if (this.data.status === 'running' && this.lastMsg && this.lastMsg.view && this.lastMsg.view.terminal) {
        setTimeout(() => location.reload(), 1500);
      } else if (this.data.status !== 'running') {
        location.reload();
      }
      return;
    }
    // Rendered (synchronously, above): acknowledge it, or the server stops sending views.
    this.ackSoon();
  },

  // The server sends at most a few views (ARENA_WS_UNACKED_VIEWS, 32 by default) ahead of the
  // last ack.  Acknowledging every ACK_EVERY-th view, and anything else ACK_DELAY_MS after it
  // came, keeps it sending without a wait, at an eighth of the messages: with 500 spectators
  // an ack per view each took the server's whole core (benchmarks/spectator_fanout.py).
  ackSoon() {
    const ACK_EVERY = 8, ACK_DELAY_MS = 250;
    clearTimeout(this.ackTimer);
    if (this.version - (this.acked || 0) >= ACK_EVERY) this.sendAck();
    else this.ackTimer = setTimeout(() => this.sendAck(), ACK_DELAY_MS);
  },

  sendAck() {
    clearTimeout(this.ackTimer);
    this.acked = this.version;
    this.send({type: 'ack', version: this.version});
  },

  showView(msg) {
    if (this.ended) return;  // a view that was on its way when the match ended
    this.lastMsg = msg;
    (msg.names || []).forEach((name, i) => { if (this.data.seats[i] && name) this.data.seats[i].name = name; });
    this.away = msg.away || [];  // people whose seat is played for them (left, or away)
    this.viewHooks.forEach((hook) => hook(msg));
    this.request = msg.request || null;
    if (!this.request || !this.answered || this.answered.version !== this.request.version) this.answered = null;
    this.remember(msg);
    this.noticeTurn();
    if (this.request && msg.ts) {
      // Server clock to local clock: what was left when the server sent it.
      const left = this.request.deadline - msg.ts;
      this.deadline = performance.now() + left * 1000;
    } else {
      this.deadline = null;
    }
    // Other people's deadlines, for the countdown next to whoever is thinking.
    this.deadlines = {};
    for (const [seat, deadline] of Object.entries(msg.deadlines || {})) {
      if (msg.ts) this.deadlines[seat] = performance.now() + (deadline - msg.ts) * 1000;
    }
    this.rerender();
    if (msg.view && msg.view.terminal && this.data.status === 'running') {
      this.flash('The match is over. Opening the replay…');
    }
    this.tick();
  },

  rerender() {
    const msg = this.lastMsg;
    this.showTurnInTitle();
    if (!msg || this.replay || this.ended) return;
    this.game().render(msg.view, this.context(msg));
    this.tick();
  },

  // --- the end, however it comes --------------------------------------------------------------
  // The match ended (msg: {status, reason, notice}): finished, abandoned, cancelled, the server
  // stopping or failing.  Every open page hears it at once: nothing on screen may still wait
  // for a move.  A finished match opens its replay (the last view already shows the result);
  // a stopped one keeps its last position on screen, under the notice.
  showEnd(msg) {
    if (this.ended) return;
    this.ended = msg;
    this.data.status = msg.status;
    this.request = null;
    this.answered = null;
    this.deadline = null;
    this.deadlines = {};
    this.away = [];
    this.showTurnInTitle();
    const badge = document.getElementById('status');
    if (badge) {
      badge.textContent = msg.status;
      badge.className = `status status-${msg.status}`;
    }
    this.endHooks.forEach((hook) => hook(msg));
    const watching = document.getElementById('who-am-i');
    if (watching && this.data.my_seat === null) watching.hidden = true;  // "You are watching live…"
    const last = this.lastMsg;
    const finished = msg.status === 'finished' && last && last.view && last.view.terminal;
    if (last && last.view && !this.replay) {
      this.game().render(last.view, {...this.context(last), request: null, answered: null,
                                     othersCountdown: () => null});
    }
    // Freeze the table as it stands: a game script may still draw views it paced (Jass shows
    // each trick a moment) or redraw on a click, and must not bring a turn back.  It draws
    // into the old elements from now on, which are no longer on the page.
    const board = this.board.cloneNode(true);
    board.querySelectorAll('button, .countdown').forEach((node) => node.remove());
    this.board.replaceWith(board);
    this.board = board;
    const actions = this.actions.cloneNode(false);  // no controls, no "Waiting…", no hand to play from
    this.actions.replaceWith(actions);
    this.actions = actions;
    if (finished) {
      this.flash('The match is over. Opening the replay…');
      setTimeout(() => location.reload(), 1500);
      return;
    }
    const notice = el('div', {class: 'status-line done match-ended', 'data-testid': 'status', role: 'status'},
      el('span', {}, msg.notice), el('a', {class: 'button secondary small', href: location.pathname}, 'See the replay'));
    this.board.querySelectorAll('.on-turn').forEach((seat) => {
      seat.classList.remove('on-turn');
      seat.querySelectorAll('.badge').forEach((badge) => {
        if (badge.classList.length === 1 || badge.classList.contains('turn')) badge.remove();
      });
    });
    const line = this.board.querySelector('[data-testid=status]');
    if (line) line.replaceWith(notice);
    else this.board.replaceChildren(notice);  // the table never came ("Loading the table…")
  },

  // --- "your turn" while the tab is in the background ---------------------------------------
  setupTurnNotice() {
    this.title = document.title;
    this.noticed = null;  // the version of the last request announced
    document.addEventListener('visibilitychange', () => this.showTurnInTitle());
    const toggle = document.getElementById('sound-toggle');
    if (toggle) {
      const show = () => {
        const on = localStorage.getItem(SOUND_KEY) !== 'off';
        toggle.textContent = on ? 'Sound on' : 'Sound off';
        toggle.setAttribute('aria-pressed', String(on));
      };
      toggle.addEventListener('click', () => {
        localStorage.setItem(SOUND_KEY, localStorage.getItem(SOUND_KEY) === 'off' ? 'on' : 'off');
        show();
      });
      show();
    }
    // Browsers let a page play sound only after the person touched it: get the audio ready
    // on the first touch, so that a later beep in the background is heard.
    const unlock = () => {
      if (!window.AudioContext) return;
      this.audio = this.audio || new AudioContext();
      this.audio.resume().catch(() => {});
    };
    document.addEventListener('pointerdown', unlock, {once: true});
    document.addEventListener('keydown', unlock, {once: true});
  },

  // An open request the person has to answer (not one that silence answers, like a
  // challenge window), not answered yet.
  myTurn() {
    return !!(this.request && !this.answered && !OPTIONAL_REQUESTS.includes(this.request.kind));
  },

  // A new request while the tab is hidden: a beep, unless the person switched sound off.
  noticeTurn() {
    if (!this.myTurn() || this.noticed === this.request.version) return;
    this.noticed = this.request.version;
    if (document.hidden && localStorage.getItem(SOUND_KEY) !== 'off') this.beep();
  },

  showTurnInTitle() {
    document.title = document.hidden && this.myTurn() ? `● Your turn – ${this.title}` : this.title;
  },

  // Two short tones from an oscillator (no audio file to load).
  beep() {
    if (!window.AudioContext) return;
    this.audio = this.audio || new AudioContext();
    const audio = this.audio;
    audio.resume().catch(() => {});
    [[660, 0], [880, 0.15]].forEach(([hz, at]) => {
      const tone = audio.createOscillator();
      const gain = audio.createGain();
      tone.frequency.value = hz;
      const t = audio.currentTime + at;
      gain.gain.setValueAtTime(0.0001, t);
      gain.gain.exponentialRampToValueAtTime(0.2, t + 0.02);
      gain.gain.exponentialRampToValueAtTime(0.0001, t + 0.12);
      tone.connect(gain).connect(audio.destination);
      tone.start(t);
      tone.stop(t + 0.13);
    });
  },

  // Forced answers (timeouts, malformed replies) end a round; keep them with that round so
  // the round's outcome can say why, for as long as it is shown.
  remember(msg) {
    const forced = (msg.answers || []).filter((a) => a.forced);
    if (!forced.length) return;
    for (const h of msg.happenings || []) {
      if (h.game_number !== undefined && h.round_number !== undefined) this.forced[`${h.game_number}/${h.round_number}`] = forced;
    }
  },

  context(msg) {
    return {
      seats: this.data.seats,
      mySeat: this.data.my_seat,
      request: this.request,
      happenings: msg.happenings || [],
      answers: msg.answers || [],
      board: this.board,
      actions: this.actions,
      log: this.logEl,
      replay: !!this.replay,
      result: this.data.result,
      answered: this.answered,
      act: (action) => {
        if (!this.request || this.answered) return;
        if (!this.ws || this.ws.readyState !== WebSocket.OPEN) {
          this.flash('Not connected: your move was not sent. Reconnecting…');
          return;
        }
        this.send({type: 'act', version: this.request.version, action});
        this.answered = {version: this.request.version, action};
        this.rerender();
      },
      forcedFor: (gameNumber, roundNumber) => this.forced[`${gameNumber}/${roundNumber}`] || [],
      // A countdown for another seat's person, or null when they have no open request.
      othersCountdown: (seat) => (!this.replay && this.deadlines && this.deadlines[seat] !== undefined
        ? el('span', {class: 'countdown', 'data-seat': String(seat), title: 'seconds left'}) : null),
      // A bot that connected without its key is marked once, in the page's head, not in every
      // sentence that names it.
      name: (seat) => ((this.data.seats[seat] && this.data.seats[seat].name) || `Seat ${seat + 1}`)
        + (!this.replay && (this.away || []).includes(seat) ? ' (away)' : ''),
    };
  },

  // Every element with class "countdown" shows the seconds left on the open request; one
  // with data-seat shows that person's (a spectator watching someone think).
  tick() {
    const now = performance.now();
    document.querySelectorAll('.countdown').forEach((el) => {
      const seat = el.dataset.seat;
      const deadline = seat === undefined ? (this.answered ? null : this.deadline) : (this.deadlines || {})[seat];
      if (deadline === null || deadline === undefined) { el.textContent = ''; return; }
      const left = Math.max(0, (deadline - now) / 1000);
      el.textContent = `${Math.ceil(left)} s`;
      el.classList.toggle('urgent', left < 5);
    });
  },

  flash(text) {
    let el = document.getElementById('flash');
    if (!el) {
      el = document.createElement('div');
      el.id = 'flash';
      el.className = 'flash';
      document.body.appendChild(el);
    }
    el.textContent = text;
    el.hidden = false;
    clearTimeout(this.flashTimer);
    this.flashTimer = setTimeout(() => { el.hidden = true; }, 4000);
  },

  // --- replay -------------------------------------------------------------------------------
  async startReplay() {
    this.replay = {frames: [], pos: 0, total: null, timer: null, wanted: 0};
    const bar = document.getElementById('replay');
    bar.hidden = false;
    bar.addEventListener('click', (e) => {
      const button = e.target.closest('button');
      if (!button) return;
      if (button.dataset.jump) this.replayJump(button.dataset.jump, Number(button.dataset.dir));
      else this.replayStep(button.dataset.step);
    });
    const slider = document.getElementById('replay-slider');
    slider.addEventListener('input', () => { this.stopPlaying(); this.replayShow(Number(slider.value)); });
    const speed = document.getElementById('replay-speed');
    if (speed) {
      const saved = localStorage.getItem(SPEED_KEY);
      if (saved && [...speed.options].some((o) => o.value === saved)) speed.value = saved;
      speed.addEventListener('change', () => {
        localStorage.setItem(SPEED_KEY, speed.value);
        if (this.replay.timer) this.playFrom();  // the new pace from the next step on
      });
    }
    document.addEventListener('keydown', (e) => {
      if (e.target.closest && e.target.closest('input, select, textarea')) return;  // the slider has its own keys
      const what = {ArrowRight: 'next', ArrowLeft: 'prev', Home: 'first', End: 'last'}[e.key];
      if (what) { e.preventDefault(); this.replayStep(what); }
    });
    await this.loadFrames(0);
    if (!this.replay.frames.length) {
      document.getElementById('replay-pos').textContent = 'Replay not available';
      return;
    }
    const asked = stepInAddress();
    this.replayShow(asked !== null ? asked : (this.replay.total ? this.replay.total - 1 : 0));
  },

  async loadFrames(start) {
    const r = this.replay;
    const resp = await fetch(`/api/matches/${this.data.match}/replay/?start=${start}&count=${REPLAY_PAGE}`);
    if (!resp.ok) return;
    const body = await resp.json();
    body.frames.forEach((f, i) => {
      r.frames[start + i] = f;
      this.remember(f);
      this.replayMarks(f).forEach((kind) => this.showJumps(kind));
    });
    if (body.total !== null) r.total = body.total;
  },

  // The kinds of start a replay frame is ("round", "game", "trick"): the frame whose happenings
  // end a round, game or trick shows the next one starting (and the one just over).  A game
  // script may say it otherwise with `marks(frame)`.
  replayMarks(frame) {
    const game = this.game();
    if (game && game.marks) return game.marks(frame) || [];
    return [...new Set((frame.happenings || []).map((h) => REPLAY_MARKS[h.type]).filter(Boolean))];
  },

  // The jump buttons of a kind appear once the replay has such a start.
  showJumps(kind) {
    document.querySelectorAll(`#replay [data-jump="${kind}"]`).forEach((b) => { b.hidden = false; });
  },

  async replayShow(pos) {
    const r = this.replay;
    const last = r.total !== null ? r.total - 1 : r.frames.length;
    pos = Math.max(0, Math.min(pos, last));
    r.wanted = pos;
    if (!r.frames[pos]) await this.loadFrames(Math.floor(pos / REPLAY_PAGE) * REPLAY_PAGE);
    // A newer choice (the slider keeps moving while a page loads) wins over this one.
    if (!r.frames[pos] || r.wanted !== pos) return;
    r.pos = pos;
    const frame = r.frames[pos];
    const total = r.total !== null ? r.total - 1 : null;
    document.getElementById('replay-pos').textContent = `Step ${pos} of ${total !== null ? total : '…'}`;
    const slider = document.getElementById('replay-slider');
    slider.max = String(total !== null ? total : r.frames.length - 1);
    slider.value = String(pos);
    slider.setAttribute('aria-valuetext', `Step ${pos}`);
    this.stepToAddress(pos);
    const bar = document.getElementById('replay');
    bar.querySelectorAll('[data-step=first], [data-step=prev], [data-dir="-1"]').forEach((b) => { b.disabled = pos === 0; });
    bar.querySelectorAll('[data-step=next], [data-step=last], [data-dir="1"]').forEach((b) => { b.disabled = total !== null && pos >= total; });
    this.request = null;
    this.deadline = null;
    this.game().render(frame.view, {...this.context({happenings: frame.happenings, answers: frame.answers}),
                                    replay: true, request: null, step: pos,
                                    previous: pos > 0 ? (r.frames[pos - 1] || null) : null});
  },

  // The address follows the step, so that it can be shared or reloaded (as on lichess).
  // Written at most every ADDRESS_MS, the last step always: Safari refuses more than 100
  // replaceState calls in 30 s, which a dragged slider or a fast Play would pass.
  stepToAddress(pos) {
    const ADDRESS_MS = 400;
    const r = this.replay;
    r.addressPos = pos;
    if (r.addressTimer) return;
    const write = () => {
      const address = new URL(location.href);
      address.searchParams.set('step', String(r.addressPos));
      if (address.href !== location.href) history.replaceState(history.state, '', address);
    };
    write();
    r.addressTimer = setTimeout(() => { r.addressTimer = null; write(); }, ADDRESS_MS);
  },

  // To the next (dir 1) or previous (dir -1) start of a `kind` ("round", "game", "trick"),
  // loading pages on the way; the first or last step when there is none.  Backwards it goes
  // to the start of the current one first, as a media player's "previous" does.
  async replayJump(kind, dir) {
    const r = this.replay;
    this.stopPlaying();
    for (let pos = r.pos + dir; pos >= 0 && (r.total === null || pos < r.total); pos += dir) {
      if (!r.frames[pos]) {
        await this.loadFrames(Math.floor(pos / REPLAY_PAGE) * REPLAY_PAGE);
        if (!r.frames[pos]) break;  // past the end of an unfinished log
      }
      if (this.replayMarks(r.frames[pos]).includes(kind)) { this.replayShow(pos); return; }
    }
    this.replayStep(dir < 0 ? 'first' : 'last');
  },

  // Stop "Play" (any other way of moving does).
  stopPlaying() {
    const r = this.replay;
    if (!r.timer) return;
    clearInterval(r.timer);
    r.timer = null;
    document.querySelector('#replay [data-step=play]').textContent = 'Play';
  },

  // (Re)start "Play"'s timer at the chosen speed (1x: a step every PLAY_STEP_MS).
  playFrom() {
    const r = this.replay;
    const speed = document.getElementById('replay-speed');
    const factor = speed ? Number(speed.value) || 1 : 1;
    clearInterval(r.timer);
    r.timer = setInterval(() => {
      if (r.total !== null && r.pos >= r.total - 1) { this.stopPlaying(); return; }
      this.replayShow(r.pos + 1);
    }, PLAY_STEP_MS / factor);
  },

  replayStep(what) {
    const r = this.replay;
    if (what === 'play') {
      if (r.timer) { this.stopPlaying(); return; }
      if (r.total !== null && r.pos >= r.total - 1) this.replayShow(0);
      document.querySelector('#replay [data-step=play]').textContent = 'Pause';
      this.playFrom();
      return;
    }
    this.stopPlaying();
    const to = {first: 0, prev: r.pos - 1, next: r.pos + 1, last: r.total !== null ? r.total - 1 : r.pos + REPLAY_PAGE}[what];
    this.replayShow(to);
  },
};

// Small helpers for the game scripts.
function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === 'class') node.className = v;
    else if (k.startsWith('on')) node.addEventListener(k.slice(2), v);
    else if (v !== null && v !== undefined && v !== false) node.setAttribute(k, v === true ? '' : v);
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    node.appendChild(typeof child === 'string' || typeof child === 'number' ? document.createTextNode(String(child)) : child);
  }
  return node;
}
