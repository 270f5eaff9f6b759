// The match page client, the same for every game: the WebSocket with versioned views and
// resync, the countdown, and the step-through replay of a finished match.  The game's own
// script registers `Arena.games[slug] = {render(view, ctx)}` to draw the table.
'use strict';

const Arena = {
  games: {},

  start(data) {
    this.data = data;
    this.version = 0;
    this.board = document.getElementById('board');
    this.actions = document.getElementById('actions');
    this.logEl = document.getElementById('log');
    this.deadline = null;
    this.request = null;
    this.lastMsg = null;
    this.retry = 500;
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
      if (msg.version <= this.version) return;  // a duplicate or an older view
      if (this.version && msg.version > this.version + 1) this.send({type: 'resync'});
      this.version = msg.version;
      this.showView(msg);
    } else if (msg.type === 'match.final') {
      if (this.data.status === 'running') { location.reload(); return; }
      this.finalMsg = msg;
      if (!this.replay) this.showView({view: msg.view, happenings: [], answers: null, final: true});
    } else if (msg.type === 'match.error') {
      this.flash(msg.message);
    } else if (msg.type === 'table.update') {
      if (this.data.status === 'running' && this.lastMsg && this.lastMsg.view && this.lastMsg.view.terminal) {
        setTimeout(() => location.reload(), 1500);
      } else if (this.data.status !== 'running') {
        location.reload();
      }
    }
  },

  showView(msg) {
    this.lastMsg = msg;
    this.request = msg.request || null;
    if (this.request && msg.ts) {
      // Server clock to local clock: what was left when the server sent it.
      const left = this.request.deadline - msg.ts;
      this.deadline = performance.now() + left * 1000;
    } else {
      this.deadline = null;
    }
    const ctx = this.context(msg);
    this.game().render(msg.view, ctx);
    if (msg.view && msg.view.terminal && this.data.status === 'running') {
      this.flash('The match is over. Opening the replay…');
    }
    this.tick();
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
      act: (action) => {
        if (!this.request) return;
        this.send({type: 'act', version: this.request.version, action});
      },
      name: (seat) => (this.data.seats[seat] && this.data.seats[seat].name) || `Seat ${seat + 1}`,
    };
  },

  tick() {
    const el = document.getElementById('countdown');
    if (!el) return;
    if (this.deadline === null) { el.textContent = ''; return; }
    const left = Math.max(0, (this.deadline - performance.now()) / 1000);
    el.textContent = `${left.toFixed(0)} s`;
    el.classList.toggle('urgent', left < 5);
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
    this.replay = {frames: [], pos: 0, total: null, timer: null};
    const bar = document.getElementById('replay');
    bar.hidden = false;
    bar.addEventListener('click', (e) => {
      const button = e.target.closest('button');
      if (button) this.replayStep(button.dataset.step);
    });
    document.addEventListener('keydown', (e) => {
      if (e.key === 'ArrowRight') this.replayStep('next');
      if (e.key === 'ArrowLeft') this.replayStep('prev');
    });
    await this.loadFrames(0);
    this.replayShow(this.replay.total ? this.replay.total - 1 : 0);
  },

  async loadFrames(start) {
    const r = this.replay;
    const resp = await fetch(`/api/matches/${this.data.match}/replay/?start=${start}&count=500`);
    if (!resp.ok) return;
    const body = await resp.json();
    body.frames.forEach((f, i) => { r.frames[start + i] = f; });
    if (body.total !== null) r.total = body.total;
  },

  async replayShow(pos) {
    const r = this.replay;
    const last = r.total !== null ? r.total - 1 : r.frames.length;
    pos = Math.max(0, Math.min(pos, last));
    if (!r.frames[pos]) await this.loadFrames(Math.floor(pos / 500) * 500);
    if (!r.frames[pos]) return;
    r.pos = pos;
    const frame = r.frames[pos];
    document.getElementById('replay-pos').textContent =
      `step ${pos} / ${r.total !== null ? r.total - 1 : '…'}`;
    this.request = null;
    this.deadline = null;
    this.game().render(frame.view, {...this.context({happenings: frame.happenings, answers: frame.answers}),
                                    replay: true, request: null});
  },

  replayStep(what) {
    const r = this.replay;
    if (what === 'play') {
      if (r.timer) { clearInterval(r.timer); r.timer = null; return; }
      if (r.total !== null && r.pos >= r.total - 1) this.replayShow(0);
      r.timer = setInterval(() => {
        if (r.total !== null && r.pos >= r.total - 1) { clearInterval(r.timer); r.timer = null; return; }
        this.replayShow(r.pos + 1);
      }, 700);
      return;
    }
    const to = {first: 0, prev: r.pos - 1, next: r.pos + 1, last: r.total !== null ? r.total - 1 : r.pos + 500}[what];
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
