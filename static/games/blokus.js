// Blokus (Software-Challenge 2021 and its 2027 variant) board: the 20x20 board with every
// colour as a colour AND a letter (B, Y, R, G: colour-blind players), the last move outlined,
// whose turn it is (colour and team) with the countdown, the round, points per colour and per
// team, the pieces left per colour as small drawings, forced endings in words, bot debug hints
// where a view carries them, and the step's moves in a replay.
//
// A person on turn picks a piece of the colour to move in the dock at the bottom, rotates and
// flips it (buttons, or keys: r/e rotate clockwise, shift+r/q anticlockwise, f flip, Esc drop,
// arrows move the preview, Enter places) and sees a preview under the pointer with a green
// (legal) or red (not legal, and why) outline; the cells where the colour may play are marked.
// With a mouse a click places the piece; on a touch screen a tap puts the preview there and a
// second tap on it, or "Place", confirms.  Legality is computed here from the observation (the
// notes' rules, and the 2027 first move on the border); the server checks again and refuses a
// bad move without punishment.
//
// Actions sent: ["set", color, kind, rotation, flipped, x, y] with (x, y) the top-left of the
// transformed piece's bounding box (specs/blokus-xml.seed.md, "Spielstein Transformationen"),
// and ["skip", color].  Every name is untrusted: it only ever goes into text nodes (el()).
'use strict';

(function () {
  const SIZE = 20;
  const COLORS = ['BLUE', 'YELLOW', 'RED', 'GREEN'];  // turn order
  const LETTER = {BLUE: 'B', YELLOW: 'Y', RED: 'R', GREEN: 'G'};
  const COLOR_NAME = {BLUE: 'Blue', YELLOW: 'Yellow', RED: 'Red', GREEN: 'Green'};
  const TEAMS = ['ONE', 'TWO'];  // seat 0 plays BLUE and RED, seat 1 YELLOW and GREEN
  const ROTATIONS = ['NONE', 'RIGHT', 'MIRROR', 'LEFT'];
  // The 21 shapes' normalised cells [x, y] (notes, section Rules), in the contest's order.
  const SHAPES = {
    MONO: [[0, 0]],
    DOMINO: [[0, 0], [1, 0]],
    TRIO_L: [[0, 0], [0, 1], [1, 1]],
    TRIO_I: [[0, 0], [0, 1], [0, 2]],
    TETRO_O: [[0, 0], [1, 0], [0, 1], [1, 1]],
    TETRO_T: [[0, 0], [1, 0], [2, 0], [1, 1]],
    TETRO_I: [[0, 0], [0, 1], [0, 2], [0, 3]],
    TETRO_L: [[0, 0], [0, 1], [0, 2], [1, 2]],
    TETRO_Z: [[0, 0], [1, 0], [1, 1], [2, 1]],
    PENTO_L: [[0, 0], [0, 1], [0, 2], [0, 3], [1, 3]],
    PENTO_T: [[0, 0], [1, 0], [2, 0], [1, 1], [1, 2]],
    PENTO_V: [[0, 0], [0, 1], [0, 2], [1, 2], [2, 2]],
    PENTO_S: [[1, 0], [2, 0], [3, 0], [0, 1], [1, 1]],
    PENTO_Z: [[0, 0], [1, 0], [1, 1], [1, 2], [2, 2]],
    PENTO_I: [[0, 0], [0, 1], [0, 2], [0, 3], [0, 4]],
    PENTO_P: [[0, 0], [1, 0], [0, 1], [1, 1], [0, 2]],
    PENTO_W: [[0, 0], [0, 1], [1, 1], [1, 2], [2, 2]],
    PENTO_U: [[0, 0], [0, 1], [1, 1], [2, 1], [2, 0]],
    PENTO_R: [[0, 1], [1, 1], [1, 2], [2, 1], [2, 0]],
    PENTO_X: [[1, 0], [0, 1], [1, 1], [2, 1], [1, 2]],
    PENTO_Y: [[0, 1], [1, 0], [1, 1], [1, 2], [1, 3]],
  };
  const ALL_SHAPES = Object.keys(SHAPES).length;
  // What people call the pieces (tooltips, screen readers); the wire's names (MONO, PENTO_L)
  // mean nothing at the table, so the pages draw the piece and name it only here.
  function pieceName(kind) {
    if (kind === 'MONO') return 'single square';
    if (kind === 'DOMINO') return 'domino (2 squares)';
    const [family, letter] = kind.split('_');
    const size = {TRIO: [3, 'tromino'], TETRO: [4, 'tetromino'], PENTO: [5, 'pentomino']}[family];
    return size ? `${letter} ${size[1]} (${size[0]} squares)` : kind;
  }
  // The board's labels: columns A..T left to right, rows 1..20 top to bottom; the protocol's
  // x and y (0..19) are the column's and row's index.
  const COLUMN = 'ABCDEFGHIJKLMNOPQRST';
  const square = (x, y) => `${COLUMN[x]}${y + 1}`;
  // How a forced ending reads (rules.CAUSES).
  const CAUSE_TEXT = {
    RULE_VIOLATION: 'broke a rule', SOFT_TIMEOUT: 'moved too late (soft time limit)',
    HARD_TIMEOUT: 'did not move in time (hard time limit)', LEFT: 'left the game',
  };

  const colorOf = (view) => view.current_color;
  const seatOfColor = (color) => COLORS.indexOf(color) % 2;
  const isSeat = (seat) => seat !== null && seat !== undefined;
  const plural = (n, one, many) => `${n} ${n === 1 ? one : many}`;

  // --- pieces: the seed's transformation ---------------------------------------------------
  // Rotation about the origin (seed): RIGHT (x, y) -> (-y, x), MIRROR (-x, -y), LEFT (y, -x).
  // With y pointing down, RIGHT turns a piece clockwise on the screen.
  const ROTATE = {
    NONE: ([x, y]) => [x, y], RIGHT: ([x, y]) => [-y, x], MIRROR: ([x, y]) => [-x, -y], LEFT: ([x, y]) => [y, -x],
  };

  // Shift cells to the top-left corner (min x = min y = 0), sorted by row then column.
  function normalise(cells) {
    const minX = Math.min(...cells.map((c) => c[0])), minY = Math.min(...cells.map((c) => c[1]));
    return cells.map(([x, y]) => [x - minX, y - minY]).sort((a, b) => a[1] - b[1] || a[0] - b[0]);
  }

  /** A shape's cells after `rotation` and then, if `flipped`, the flip (x, y) -> (-x, y),
   *  normalised: the seed's order.  Placed at (x, y) they are offset by (x, y). */
  function transform(kind, rotation, flipped) {
    let cells = normalise(SHAPES[kind].map(ROTATE[rotation]));
    if (flipped) cells = normalise(cells.map(([x, y]) => [-x, y]));
    return cells;
  }

  const cellsKey = (cells) => cells.map((c) => c.join(',')).join(' ');

  // Every distinct orientation of each shape, with the first spelling that gives it.
  const VARIANTS = {};
  for (const kind of Object.keys(SHAPES)) {
    const seen = new Map();
    for (const flipped of [false, true]) {
      for (const rotation of ROTATIONS) {
        const cells = transform(kind, rotation, flipped);
        const key = cellsKey(cells);
        if (!seen.has(key)) seen.set(key, {rotation, flipped, cells});
      }
    }
    VARIANTS[kind] = [...seen.values()];
  }

  // The cell a piece is held by: the one nearest the middle of its box, so that the preview
  // sits centred under the pointer and rotates about it.
  function grabCell(cells) {
    const w = Math.max(...cells.map((c) => c[0])), h = Math.max(...cells.map((c) => c[1]));
    let best = cells[0], bestD = Infinity;
    for (const c of cells) {
      const d = (2 * c[0] - w) ** 2 + (2 * c[1] - h) ** 2;
      if (d < bestD) { best = c; bestD = d; }
    }
    return best;
  }

  // --- the placement rules -------------------------------------------------------------------
  /**
   * The rules for placing a piece of `color` on `view`'s board: `check(kind, cells)` with the
   * cells on the board returns null when legal, else why not (a sentence); `corners` are the
   * free cells where the colour may play (first move: the corners, 2021, or the border, 2027).
   * Rules (notes): an unplaced shape, on the board, on free cells, no edge shared with its own
   * colour, a corner shared with its own colour; the colour's first piece is the start piece
   * and covers a board corner (2021) or touches the border (2027, socha 5.x).
   */
  function placementRules(view, color) {
    const own = LETTER[color];
    const board = view.board || [];
    const at = (x, y) => (x >= 0 && y >= 0 && x < SIZE && y < SIZE ? (board[y] || '')[x] || '.' : null);
    const shapes = (view.shapes && view.shapes[color]) || [];
    const first = shapes.length === ALL_SHAPES;
    const border = view.variant === '2027';
    const onEdgeOfBoard = (x, y) => x === 0 || y === 0 || x === SIZE - 1 || y === SIZE - 1;
    const isCorner = (x, y) => (x === 0 || x === SIZE - 1) && (y === 0 || y === SIZE - 1);
    const edgeOwn = (x, y) => [[1, 0], [-1, 0], [0, 1], [0, -1]].some(([dx, dy]) => at(x + dx, y + dy) === own);
    const cornerOwn = (x, y) => [[1, 1], [-1, 1], [1, -1], [-1, -1]].some(([dx, dy]) => at(x + dx, y + dy) === own);
    const startCell = (x, y) => (border ? onEdgeOfBoard(x, y) : isCorner(x, y));
    const corners = [];
    for (let y = 0; y < SIZE; y++) {
      for (let x = 0; x < SIZE; x++) {
        if (at(x, y) !== '.') continue;
        if (first ? startCell(x, y) : (cornerOwn(x, y) && !edgeOwn(x, y))) corners.push([x, y]);
      }
    }
    function check(kind, cells) {
      if (!shapes.includes(kind)) return `The ${pieceName(kind)} is already placed`;
      if (first && view.start_piece && kind !== view.start_piece) return `The first piece must be the start piece, the ${pieceName(view.start_piece)}`;
      if (cells.some(([x, y]) => at(x, y) === null)) return 'Off the board';
      if (cells.some(([x, y]) => at(x, y) !== '.')) return 'A cell is taken';
      if (cells.some(([x, y]) => edgeOwn(x, y))) return `Touches ${COLOR_NAME[color].toLowerCase()} along an edge`;
      if (first) {
        if (!cells.some(([x, y]) => startCell(x, y))) {
          return border ? 'The first piece must touch the border' : 'The first piece must cover a corner of the board';
        }
      } else if (!cells.some(([x, y]) => cornerOwn(x, y))) {
        return `Must touch ${COLOR_NAME[color].toLowerCase()} at a corner`;
      }
      return null;
    }
    return {color, first, shapes, corners, check};
  }

  /** Every legal placement of the colour to move: [{kind, rotation, flipped, x, y, cells}]
   *  (one per distinct orientation and spot; the cells on the board). */
  function placements(view) {
    const color = colorOf(view);
    if (!color) return [];
    const rules = placementRules(view, color);
    const out = [];
    for (const kind of rules.shapes) {
      if (!SHAPES[kind] || (rules.first && view.start_piece && kind !== view.start_piece)) continue;
      for (const v of VARIANTS[kind]) {
        const w = Math.max(...v.cells.map((c) => c[0])), h = Math.max(...v.cells.map((c) => c[1]));
        for (let y = 0; y + h < SIZE; y++) {
          for (let x = 0; x + w < SIZE; x++) {
            const cells = v.cells.map(([cx, cy]) => [cx + x, cy + y]);
            if (rules.check(kind, cells) === null) out.push({kind, rotation: v.rotation, flipped: v.flipped, x, y, cells});
          }
        }
      }
    }
    return out;
  }

  // Skipping is allowed after the colour's first piece (notes; 2027 as socha 5.x plays it).
  const skipAllowed = (view, rules) => !rules.first;

  // --- drawing helpers -------------------------------------------------------------------------
  function chip(color) {
    return el('span', {class: 'bk-chip', 'data-c': LETTER[color], title: COLOR_NAME[color]}, LETTER[color]);
  }

  function colorText(color) {
    return el('span', {class: 'bk-colortext'}, chip(color), ` ${COLOR_NAME[color]}`);
  }

  // A piece as a little grid of squares in its colour (letter on the box for colour-blind eyes).
  // With `kind` it stands for the piece in a text: named for screen readers and tooltips.
  function pieceDrawing(cells, color, extra, kind) {
    const w = Math.max(...cells.map((c) => c[0])) + 1, h = Math.max(...cells.map((c) => c[1])) + 1;
    const named = kind ? {role: 'img', 'aria-label': pieceName(kind), title: pieceName(kind), 'data-shape': kind} : {'aria-hidden': 'true'};
    return el('span', {class: 'bk-piece' + (extra ? ' ' + extra : ''), 'data-c': LETTER[color], style: `--w:${w};--h:${h}`, ...named},
      cells.map(([x, y]) => el('i', {style: `grid-column:${x + 1};grid-row:${y + 1}`})));
  }

  function teamLabel(seat) { return `team ${TEAMS[seat]}`; }

  // "You" for the person's own seat (live and in the replay of their game).
  function who(ctx, seat) {
    return seat === ctx.mySeat ? 'You' : ctx.name(seat);
  }

  // --- per-turn interaction state (the page's one board) ------------------------------------
  const ui = {
    key: null,      // the request this selection belongs to
    kind: null, rot: 0, flip: false,
    at: null,       // [x, y]: the board cell the piece is held at (pointer, tap or arrows)
    pinned: false,  // put there by a tap or the keys: stays when the pointer leaves
    active: false, view: null, ctx: null, rules: null, legal: null, placeable: new Set(),
    cells: null,    // cell elements [y][x]
    previewed: [],  // cells with preview classes now
    dock: null,
  };

  function currentCells() {
    return ui.kind ? transform(ui.kind, ROTATIONS[ui.rot], ui.flip) : null;
  }

  // The placement the preview shows: the piece held at ui.at, or null.
  function previewPlacement() {
    const cells = currentCells();
    if (!cells || !ui.at) return null;
    const [gx, gy] = grabCell(cells);
    const w = Math.max(...cells.map((c) => c[0])), h = Math.max(...cells.map((c) => c[1]));
    // Held near the border the piece is kept on the board: a tap on a corner square puts it
    // into that corner.
    const x = Math.max(0, Math.min(SIZE - 1 - w, ui.at[0] - gx)), y = Math.max(0, Math.min(SIZE - 1 - h, ui.at[1] - gy));
    const onBoard = cells.map(([cx, cy]) => [cx + x, cy + y]);
    return {kind: ui.kind, rotation: ROTATIONS[ui.rot], flipped: ui.flip, x, y, cells: onBoard,
            why: ui.rules.check(ui.kind, onBoard)};
  }

  function updatePreview() {
    ui.refused = null;  // any new aim answers the last refusal
    for (const c of ui.previewed) c.classList.remove('bk-pv', 'bk-pv-ok', 'bk-pv-bad');
    ui.previewed = [];
    const p = ui.active ? previewPlacement() : null;
    if (p && ui.cells) {
      for (const [x, y] of p.cells) {
        const cell = ui.cells[y] && ui.cells[y][x];
        if (!cell) continue;
        cell.classList.add('bk-pv', p.why ? 'bk-pv-bad' : 'bk-pv-ok');
        ui.previewed.push(cell);
      }
    }
    updateDock(p);
  }

  function pick(kind) {
    if (!ui.active || !ui.placeable.has(kind)) return;
    if (ui.kind !== kind) { ui.kind = kind; ui.rot = 0; ui.flip = false; }
    redrawDock();
  }

  // Turn the piece a quarter clockwise (dir 1) or anticlockwise (-1) as seen on the screen.
  // Flipped pieces turn the other way round: flip after RIGHT is LEFT before the flip.
  function rotate(dir) {
    if (!ui.kind) return;
    ui.rot = (ui.rot + (ui.flip ? -dir : dir) + 4) % 4;
    redrawDock();
  }

  function flip() {
    if (!ui.kind) return;
    ui.flip = !ui.flip;
    redrawDock();
  }

  function drop() {
    ui.kind = null;
    ui.pinned = false;
    redrawDock();
  }

  function place() {
    if (!ui.active) return;
    const p = previewPlacement();
    if (!p) return;
    // Refused here, in the dock's prompt (a message over the board would hide it and take the
    // pointer off the preview); the next move of the pointer or the keys clears it.
    if (p.why) { ui.refused = p.why; updateDock(p); return; }
    ui.ctx.act(['set', ui.rules.color, p.kind, p.rotation, p.flipped, p.x, p.y]);
  }

  function skip() {
    if (!ui.active || !skipAllowed(ui.view, ui.rules)) return;
    ui.ctx.act(['skip', ui.rules.color]);
  }

  // --- the board ------------------------------------------------------------------------------
  function cellAt(event) {
    const cell = event.target.closest && event.target.closest('.bk-cell');
    return cell ? [Number(cell.dataset.x), Number(cell.dataset.y)] : null;
  }

  function renderBoard(view, ctx) {
    const board = view.board || [];
    const last = new Set((view.last_cells || []).map((c) => c.join(',')));
    const corners = new Set(ui.active ? ui.rules.corners.map((c) => c.join(',')) : []);
    const sent = ctx.answered && Array.isArray(ctx.answered.action) && ctx.answered.action[0] === 'set'
      ? sentCells(ctx.answered.action) : new Set();
    ui.cells = [];
    const rows = [];
    for (let y = 0; y < SIZE; y++) {
      const row = [];
      for (let x = 0; x < SIZE; x++) {
        const c = (board[y] || '')[x] || '.';
        const key = `${x},${y}`;
        const classes = ['bk-cell'];
        if (last.has(key)) classes.push('bk-last');
        if (corners.has(key)) classes.push('bk-corner');
        if (sent.has(key)) classes.push('bk-sent');
        const cell = el('div', {class: classes.join(' '), 'data-x': x, 'data-y': y, 'data-c': c !== '.' ? c : null});
        row.push(cell);
        rows.push(cell);
      }
      ui.cells.push(row);
    }
    // The colour to move tints the corner marks, the preview and a move on its way.
    const turn = colorOf(view) && !view.terminal ? ` bk-turn-${LETTER[colorOf(view)]}` : '';
    const counts = COLORS.map((color) => `${COLOR_NAME[color]} ${board.join('').split(LETTER[color]).length - 1}`);
    const grid = el('div', {class: 'bk-board' + turn + (ui.active ? ' bk-active' : ''), 'data-testid': 'blokus-board', role: 'group',
                            'aria-label': `Board, 20 by 20. Squares covered: ${counts.join(', ')}.`}, rows);
    if (ui.active) {
      grid.addEventListener('pointermove', (e) => {
        if (e.pointerType !== 'mouse') return;
        ui.pinned = false;  // the mouse takes over from the arrow keys
        const at = cellAt(e);
        if (at && (!ui.at || at[0] !== ui.at[0] || at[1] !== ui.at[1])) { ui.at = at; updatePreview(); }
      });
      grid.addEventListener('pointerleave', (e) => {
        if (e.pointerType === 'mouse' && !ui.pinned) { ui.at = null; updatePreview(); }
      });
      grid.addEventListener('pointerdown', (e) => { ui.pointerType = e.pointerType; });
      grid.addEventListener('click', (e) => {
        const at = cellAt(e);
        if (!at || !ui.kind) return;
        if (ui.pointerType === 'mouse') {  // a mouse shows the preview while hovering: place now
          ui.at = at;
          ui.pinned = false;
          updatePreview();
          place();
          return;
        }
        // Touch or pen: the first tap puts the preview here, a tap on the same cell places it.
        const same = ui.pinned && ui.at && ui.at[0] === at[0] && ui.at[1] === at[1];
        ui.at = at;
        ui.pinned = true;
        updatePreview();
        if (same) place();
      });
    }
    // Labels on the top and the left, as the texts name squares (C14).
    const columns = el('div', {class: 'bk-cols', 'aria-hidden': 'true'}, [...COLUMN].map((c) => el('span', {}, c)));
    const rowLabels = el('div', {class: 'bk-rows', 'aria-hidden': 'true'},
      Array.from({length: SIZE}, (_, y) => el('span', {}, String(y + 1))));
    return el('div', {class: 'bk-board-wrap'}, el('span', {class: 'bk-axes'}), columns, rowLabels, grid);
  }

  function sentCells(action) {
    const [, , kind, rotation, flipped, x, y] = action;
    if (!SHAPES[kind] || !ROTATE[rotation]) return new Set();
    return new Set(transform(kind, rotation, !!flipped).map(([cx, cy]) => `${cx + x},${cy + y}`));
  }

  // --- status, teams, pieces left -------------------------------------------------------------
  function resultText(view, ctx) {
    const r = view.result || {};
    const scores = r.scores || view.team_points || [0, 0];
    const team = (seat) => `Team ${TEAMS[seat]} (${who(ctx, seat)})`;
    if (r.winner === null || r.winner === undefined) return `Game over: a draw, ${scores[0]} : ${scores[1]}.`;
    const w = r.winner;
    if (w === ctx.mySeat) return `Game over. You win, ${scores[w]} : ${scores[1 - w]}!`;
    return `Game over. ${team(w)} wins, ${scores[w]} : ${scores[1 - w]}.`;
  }

  function renderStatus(view, ctx) {
    // The rules count turns from 0 (as the protocol's memento does); people count from 1.
    const where = `Round ${view.round} · turn ${view.turn + 1}`;
    if (view.terminal) {
      return el('div', {class: 'status-line done', 'data-testid': 'status'}, resultText(view, ctx));
    }
    const color = colorOf(view);
    const seat = view.current_seat;
    const mine = seat === ctx.mySeat && !ctx.replay;
    let turn;
    if (mine && ctx.answered) turn = ['Sent. Waiting…'];
    else if (mine) turn = ['Your turn: ', colorText(color), ` (${teamLabel(seat)})`];
    else turn = [el('span', {class: 'name'}, ctx.name(seat)), ` (${teamLabel(seat)}) to move: `, colorText(color)];
    return el('div', {class: 'status-line', 'data-testid': 'status'},
      el('span', {class: 'where'}, ctx.replay ? `Replay · ${where}` : where),
      el('span', {class: 'turn' + (mine ? ' mine' : ''), 'data-color': color}, ...turn),
      mine ? el('span', {class: 'countdown', title: 'seconds left'}) : ctx.othersCountdown(seat));
  }

  function renderTeams(view, ctx) {
    const points = view.points || {};
    const valid = view.valid_colors || [];
    const won = view.terminal && view.result ? view.result.winner : null;
    const rows = [0, 1].map((seat) => {
      const colors = COLORS.filter((c) => seatOfColor(c) === seat);
      return el('tr', {class: (seat === ctx.mySeat && !ctx.replay ? 'mine' : '') + (won === seat ? ' won' : ''), 'data-seat': seat},
        el('th', {scope: 'row'}, el('span', {class: 'bk-team'}, `Team ${TEAMS[seat]}`), ' ',
          el('span', {class: 'name'}, who(ctx, seat))),
        colors.map((c) => el('td', {class: 'num' + (valid.includes(c) || view.terminal ? '' : ' out'), 'data-color': c,
                                    title: valid.includes(c) || view.terminal ? COLOR_NAME[c] : `${COLOR_NAME[c]}: no move left`},
          chip(c), ` ${points[c] || 0}`)),
        el('td', {class: 'num bk-total', 'data-testid': `team-points-${seat}`}, String((view.team_points || [0, 0])[seat])));
    });
    return el('table', {class: 'bk-teams'},
      el('thead', {}, el('tr', {}, el('th', {}, 'Team'), el('th', {colspan: 2}, 'Points per colour'), el('th', {class: 'num'}, 'Points'))),
      el('tbody', {}, rows));
  }

  function renderFacts(view) {
    const facts = [];
    if (view.start_piece && SHAPES[view.start_piece]) {
      facts.push(el('span', {class: 'fact', 'data-testid': 'start-piece'}, 'Start piece: ',
        pieceDrawing(SHAPES[view.start_piece], 'NONE', 'small', view.start_piece),
        el('span', {class: 'hint-light'}, view.variant === '2027' ? ' (first move: on the border)' : ' (first move: on a corner)')));
    }
    const last = view.last_move;
    if (Array.isArray(last)) facts.push(el('span', {class: 'fact', 'data-testid': 'last-move'}, 'Last move: ', describeAction(last)));
    return facts.length ? el('div', {class: 'bk-facts'}, facts) : null;
  }

  function describeAction(action) {
    if (!Array.isArray(action)) return `answered ${JSON.stringify(action)}`;
    const [, color, kind, rotation, flipped, x, y] = action;
    if (action[0] === 'set' && COLORS.includes(color) && SHAPES[kind] && ROTATE[rotation]
        && Number.isInteger(x) && Number.isInteger(y) && x >= 0 && y >= 0) {
      // The piece as it lies, and the squares its box spans (the protocol's x, y in the tooltip).
      const cells = transform(kind, rotation, !!flipped);
      const right = Math.min(SIZE - 1, x + Math.max(...cells.map((c) => c[0]))), bottom = Math.min(SIZE - 1, y + Math.max(...cells.map((c) => c[1])));
      return el('span', {class: 'bk-move'}, colorText(color), ' placed ', pieceDrawing(cells, color, 'tiny', kind),
        el('span', {class: 'hint-light', title: `x ${x}, y ${y} in the protocol`},
          x < SIZE && y < SIZE ? ` on ${square(x, y)}–${square(right, bottom)}` : ''));
    }
    if (action[0] === 'skip' && COLORS.includes(action[1])) return el('span', {}, colorText(action[1]), ' skipped');
    if (action[0] === 'forfeit') return `${CAUSE_TEXT[action[1]] || action[1]}: ${action[2] || ''}`;
    return `answered ${JSON.stringify(action)}`;
  }

  function renderPiecesLeft(view, ctx) {
    const shapes = view.shapes || {};
    const valid = view.valid_colors || [];
    return el('div', {class: 'bk-left', 'data-testid': 'pieces-left'},
      COLORS.map((color) => {
        const left = (shapes[color] || []).filter((k) => SHAPES[k]);
        const seat = seatOfColor(color);
        const out = !valid.includes(color) && !view.terminal;
        return el('div', {class: 'bk-left-row' + (color === colorOf(view) && !view.terminal ? ' on-turn' : '') + (out ? ' out' : ''),
                          'data-color': color},
          el('div', {class: 'bk-left-head'}, colorText(color),
            el('span', {class: 'hint-light'}, ` · ${teamLabel(seat)} · ${plural(left.length, 'piece', 'pieces')} left${out ? ' · out' : ''}`)),
          el('div', {class: 'bk-left-pieces'}, left.map((kind) => el('span', {class: 'bk-left-piece', title: pieceName(kind), 'data-shape': kind},
            pieceDrawing(SHAPES[kind], color, 'small')))));
      }));
  }

  // Why a move was forced: the full explanation (`detail`) reaches only the seat itself live,
  // and everyone in a replay; others get the public reason.
  const forcedWhy = (answer) => answer.detail || answer.reason || 'no valid answer';

  // Forced moves and the way the game ended, in words.
  function renderEnding(view, ctx) {
    const lines = [];
    for (const a of ctx.answers || []) {
      if (!a.forced) continue;
      lines.push(el('p', {class: 'forced-note', 'data-seat': a.seat}, el('b', {class: 'name'}, who(ctx, a.seat)), ': ',
        Array.isArray(a.action) && a.action[0] === 'forfeit' ? (CAUSE_TEXT[a.action[1]] || a.action[1]) : 'forced move',
        el('span', {class: 'reason'}, ` — ${forcedWhy(a)}`)));
    }
    const r = view.terminal ? view.result : null;
    if (r && Array.isArray(r.causes)) {
      r.causes.forEach((cause, seat) => {
        if (!cause || cause === 'REGULAR') return;
        const reason = (r.reasons || [])[seat];
        lines.push(el('p', {class: 'forced-note', 'data-testid': 'cause', 'data-seat': seat},
          el('b', {class: 'name'}, `Team ${TEAMS[seat]} (${who(ctx, seat)})`), ` ${CAUSE_TEXT[cause] || cause}`,
          reason ? el('span', {class: 'reason'}, `: ${reason}`) : null));
      });
    }
    return lines.length ? el('div', {class: 'bk-panel forced', 'data-testid': 'ending'}, lines) : null;
  }

  // A move's debug hints (<hint content>): `answer.hints`, or the transport's record in the
  // answer's detail, `hints: "first" "second"` (JSON strings; details reach a seat's own page
  // live and everyone in a replay).
  function hintsOf(answer) {
    if (Array.isArray(answer.hints)) return answer.hints.map(String);
    const d = answer.detail;
    if (answer.forced || typeof d !== 'string' || !d.startsWith('hints: ')) return [];
    return [...d.slice(7).matchAll(/"(?:[^"\\]|\\.)*"/g)].map((m) => {
      try { return String(JSON.parse(m[0])); } catch (e) { return m[0]; }
    });
  }

  // A bot's debug hints for the move just made, where the view carries them.
  function renderHints(ctx) {
    const moved = (ctx.happenings || []).find((h) => h.type === 'move' && COLORS.includes(h.color));
    const hints = [];
    for (const h of ctx.happenings || []) if (h.type === 'move' && Array.isArray(h.hints)) hints.push(...h.hints.map(String));
    for (const a of ctx.answers || []) hints.push(...hintsOf(a));
    if (!hints.length) return null;
    return el('div', {class: 'bk-panel bk-hints', 'data-testid': 'hints'},
      el('h4', {}, 'Debug hints', moved ? [' of ', colorText(moved.color)] : null),
      el('ul', {}, hints.slice(0, 20).map((text) => el('li', {}, text))));
  }

  // Replay: what happened at this step.
  function renderStepMoves(view, ctx) {
    if (!ctx.replay) return null;
    if (!ctx.step) return el('div', {class: 'bk-panel step-moves', 'data-testid': 'step-moves'}, el('h4', {}, 'Start'), el('p', {}, 'The board is empty.'));
    const items = [];
    for (const h of ctx.happenings || []) {
      if (h.type === 'move') items.push(el('li', {}, describeAction(h.action)));
      else if (h.type === 'dropped') {
        // A colour with every piece placed is out too, but for a happier reason.
        for (const c of (h.colors || []).filter((c) => COLORS.includes(c))) {
          const done = view.shapes && view.shapes[c] && view.shapes[c].length === 0;
          items.push(el('li', {class: 'happening'}, colorText(c),
            done ? ' has placed every piece: out.' : ' can no longer move: out.'));
        }
      } else if (h.type === 'game_over') items.push(el('li', {class: 'happening'}, 'Game over.'));
    }
    for (const a of ctx.answers || []) {
      if (a.forced) items.push(el('li', {class: 'forced-note'}, `${ctx.name(a.seat)}: ${forcedWhy(a)}`));
    }
    return el('div', {class: 'bk-panel step-moves', 'data-testid': 'step-moves'}, el('h4', {}, `Step ${ctx.step}`),
      items.length ? el('ul', {}, items) : el('p', {}, 'No move.'));
  }

  // --- the dock: the person's controls --------------------------------------------------------
  function renderDock(view, ctx) {
    const box = ctx.actions;
    box.replaceChildren();
    ui.dock = null;
    const seated = isSeat(ctx.mySeat) && !ctx.replay && !view.terminal;
    if (!seated) return;
    if (!ui.active) {
      let note;
      if (ctx.answered && Array.isArray(ctx.answered.action)) note = ['Sent: ', describeAction(ctx.answered.action), '. Waiting for the table…'];
      else if (view.current_seat === ctx.mySeat) note = ['Your move is in. Waiting…'];
      else note = [`${ctx.name(view.current_seat)} is moving (`, colorText(colorOf(view)), ')…'];
      box.appendChild(el('div', {class: 'controls bk-dock idle', 'data-kind': 'wait'}, el('p', {class: 'waiting-note'}, ...note)));
      return;
    }
    ui.dock = el('div', {class: 'controls bk-dock', 'data-kind': 'move'});
    box.appendChild(ui.dock);
    redrawDock();
  }

  // The dock's contents for the current selection (rebuilt on pick, rotate, flip).
  function redrawDock() {
    if (!ui.dock) return;
    const view = ui.view, rules = ui.rules, color = rules.color;
    const cells = currentCells();
    const sel = cells ? el('div', {class: 'bk-selected', 'data-testid': 'selected', 'data-shape': ui.kind,
                                  'data-rotation': ROTATIONS[ui.rot], 'data-flipped': String(ui.flip),
                                  'data-cells': JSON.stringify(cells), 'data-grab': grabCell(cells).join(',')},
      pieceDrawing(cells, color, 'big'), el('span', {class: 'bk-selected-name'}, pieceName(ui.kind)))
      : el('div', {class: 'bk-selected empty', 'data-testid': 'selected'}, el('span', {class: 'hint'}, rules.first ? 'Pick the start piece' : 'Pick a piece'));
    const button = (label, title, onclick, opts = {}) => el('button', {type: 'button', class: 'secondary ' + (opts.cls || ''), title,
      'aria-label': opts.aria || title, disabled: opts.disabled, 'data-testid': opts.id, onclick}, label);
    const tools = el('div', {class: 'bk-tools'},
      button('⟲', 'Rotate anticlockwise (q or shift+r)', () => rotate(-1), {disabled: !cells, id: 'rotate-left'}),
      button('⟳', 'Rotate clockwise (r or e)', () => rotate(1), {disabled: !cells, id: 'rotate-right'}),
      button('⇋', 'Flip (f)', flip, {disabled: !cells, id: 'flip'}),
      button('Place', 'Place the piece where the preview is (Enter)', place, {cls: 'primary bk-place', id: 'place', aria: 'Place'}),
      skipAllowed(view, rules) ? button('Skip', `Skip ${COLOR_NAME[color].toLowerCase()}'s turn`, skip, {cls: 'bk-skip', id: 'skip', aria: 'Skip'}) : null,
      cells ? button('✕', 'Put the piece back (Esc)', drop, {id: 'drop'}) : null);
    const tray = el('div', {class: 'bk-tray', role: 'group', 'aria-label': `${COLOR_NAME[color]} pieces`, 'data-testid': 'tray'},
      rules.shapes.filter((k) => SHAPES[k]).map((kind) => {
        const ok = ui.placeable.has(kind);
        return el('button', {type: 'button', class: 'bk-tray-piece' + (kind === ui.kind ? ' chosen' : ''), 'data-shape': kind,
                             disabled: !ok, 'aria-pressed': kind === ui.kind ? 'true' : 'false',
                             'aria-label': `${pieceName(kind)}${ok ? '' : ' (no place for it)'}`,
                             title: ok ? pieceName(kind) : `${pieceName(kind)}: no place for it now`,
                             onclick: () => pick(kind)},
          pieceDrawing(SHAPES[kind], color, 'small'));
      }));
    const start = rules.first ? (view.variant === '2027' ? ' First piece: the start piece, touching the border.'
                                                         : ' First piece: the start piece, covering a corner.') : '';
    ui.dock.replaceChildren(...[
      el('p', {class: 'prompt'}, 'Your turn: ', colorText(color), el('span', {class: 'countdown', title: 'seconds left'}),
        el('span', {class: 'bk-why', 'data-testid': 'why', 'aria-live': 'polite'})),
      el('div', {class: 'bk-dock-row'}, sel, tools),
      start ? el('p', {class: 'hint bk-first'}, start.trim()) : null,
      tray].filter(Boolean));
    updatePreview();
    Arena.tick();
  }

  // The prompt's second half and the Place button follow the preview.
  function updateDock(p) {
    if (!ui.dock) return;
    const why = ui.dock.querySelector('.bk-why');
    const placeButton = ui.dock.querySelector('.bk-place');
    if (placeButton) placeButton.disabled = !p || !!p.why;
    if (!why) return;
    why.classList.toggle('bad', !!(p && p.why));
    why.classList.toggle('refused', !!(p && p.why && ui.refused));
    why.classList.toggle('ok', !!(p && !p.why));
    if (!ui.kind) why.textContent = ui.placeable.size ? 'pick a piece below' : 'no piece fits: skip';
    else if (!p) why.textContent = 'point at the board (the dots are your corners)';
    else if (p.why) why.textContent = ui.refused ? `✗ Not here: ${p.why}` : `✗ ${p.why}`;
    else why.textContent = ui.pinned && ui.pointerType !== 'mouse' ? '✓ tap again or Place' : '✓ fits here';
  }

  // Keys while it is the person's turn (not while typing anywhere).
  document.addEventListener('keydown', (e) => {
    if (!ui.active || !ui.dock || e.ctrlKey || e.metaKey || e.altKey) return;
    if (e.target.closest && e.target.closest('input, select, textarea')) return;
    const key = e.key.length === 1 ? e.key.toLowerCase() : e.key;
    let done = true;
    if (key === 'r') rotate(e.shiftKey ? -1 : 1);
    else if (key === 'e') rotate(1);
    else if (key === 'q') rotate(-1);
    else if (key === 'f') flip();
    else if (key === 'Escape') drop();
    else if (key === 'Enter' && ui.kind && ui.at && !(e.target.closest && e.target.closest('button'))) place();
    else if (key.startsWith('Arrow') && ui.kind) {
      const [dx, dy] = {ArrowLeft: [-1, 0], ArrowRight: [1, 0], ArrowUp: [0, -1], ArrowDown: [0, 1]}[key] || [0, 0];
      const [x, y] = ui.at || [SIZE / 2, SIZE / 2];
      ui.at = [Math.max(0, Math.min(SIZE - 1, x + dx)), Math.max(0, Math.min(SIZE - 1, y + dy))];
      ui.pinned = true;
      ui.pointerType = 'keyboard';
      updatePreview();
    } else done = false;
    if (done) e.preventDefault();
  });

  function render(view, ctx) {
    ui.view = view;
    ui.ctx = ctx;
    ui.active = !!(ctx.request && !ctx.answered && !ctx.replay && !view.terminal && isSeat(ctx.mySeat)
                   && view.current_seat === ctx.mySeat && colorOf(view));
    const key = ui.active ? `${ctx.request.version}:${colorOf(view)}` : null;
    const fresh = key !== ui.key && ui.active;
    if (key !== ui.key) {  // a new request: a fresh selection
      ui.key = key;
      ui.kind = null;
      ui.at = null;
      ui.pinned = false;
    }
    if (ui.active) {
      ui.rules = placementRules(view, colorOf(view));
      ui.legal = placements(view);
      ui.placeable = new Set(ui.legal.map((p) => p.kind));
      if (ui.kind && !ui.placeable.has(ui.kind)) ui.kind = null;
      if (!ui.kind && ui.rules.first && ui.placeable.has(view.start_piece)) ui.kind = view.start_piece;  // the only choice
    } else {
      ui.rules = null;
      ui.legal = null;
      ui.placeable = new Set();
    }
    ui.previewed = [];
    // A seated person's page keeps its head (title, Leave) and the board above the dock in
    // view without scrolling: the board is sized for it (arena.css, .bk-seated).
    const seated = isSeat(ctx.mySeat) && !ctx.replay && !view.terminal;
    ctx.board.replaceChildren(el('div', {class: 'bk-layout' + (seated ? ' bk-seated' : '')},
      renderStatus(view, ctx),
      el('div', {class: 'bk-main'}, renderBoard(view, ctx)),
      el('div', {class: 'bk-side'}, renderTeams(view, ctx), renderFacts(view), renderEnding(view, ctx),
        renderStepMoves(view, ctx), renderHints(ctx), renderPiecesLeft(view, ctx))));
    renderDock(view, ctx);
    updatePreview();
    if (fresh) keepBoardAboveDock();
  }

  // The dock sits at the bottom of the screen; where the page's head leaves too little room
  // (a phone, a tall header) it covers the board's last rows, two start corners among them.
  // When a turn begins, scroll just enough to lift the whole board above the dock, as long as
  // its top (with the column letters) stays in view; when it fits, nothing moves.
  function keepBoardAboveDock() {
    const wrap = ui.ctx.board.querySelector('.bk-board-wrap');
    if (!wrap || !ui.dock) return;
    const box = wrap.getBoundingClientRect();
    const covered = Math.ceil(box.bottom - ui.dock.getBoundingClientRect().top) + 4;
    if (covered > 4 && box.top - covered >= 0) window.scrollBy(0, covered);
  }

  // Replay jumps: a step whose move ends a round (the next colour to move is in a later
  // round) starts the next one.  The move's own turn is the last turn of its colour before
  // the view's (dropped colours' turns in between still count).
  function marks(frame) {
    const v = frame.view;
    const move = (frame.happenings || []).find((h) => h.type === 'move' && COLORS.includes(h.color));
    if (!v || !move || typeof v.turn !== 'number') return [];
    const c = COLORS.indexOf(move.color);
    const moveTurn = v.turn - 1 - (((v.turn - 1 - c) % 4) + 4) % 4;
    return v.round > 1 + Math.floor(moveTurn / 4) ? ['round'] : [];
  }

  Arena.games.blokus = {
    render,
    marks,
    // For tests and curious people: the same rules the preview uses.
    transform,
    placements,
    grabCell,
  };
})();
