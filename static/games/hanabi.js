// Hanabi table: whose turn (with the countdown), the tokens and the deck, the five fireworks,
// every hand (the others' face up with what each player knows of each card; your own face down
// with what you know), the discards grouped by colour and number (gone / copies), the last
// action highlighted (a hint's touched cards outlined), the moves numbered in play order (kept
// over a reload), and on your turn the controls: tap one of your cards to play or discard it,
// or give a hint (colour or number) to another player.  Faces come only as the view carries them: null means hidden.  Every name
// is untrusted: it only ever goes into text nodes (el() in match.js).
'use strict';

(function () {
  const COLORS = ['RED', 'YELLOW', 'GREEN', 'BLUE', 'WHITE'];
  const LETTER = {RED: 'R', YELLOW: 'Y', GREEN: 'G', BLUE: 'B', WHITE: 'W'};
  const COPIES = {1: 3, 2: 2, 3: 2, 4: 2, 5: 1};
  // The move list: move number (from 1, in play order) -> its line.  A page opened on a
  // running match starts from the moves so far (Arena.data.moves, from the event log), so a
  // reload keeps it; each view adds its last move (view.moves is its number).
  const log = new Map();
  let restored = false;
  let chosen = null;     // the id of your card you tapped
  const SHOWN = 12;      // moves listed (the newest; older ones stay in the match's replay)

  const cap = (s) => s.charAt(0) + s.slice(1).toLowerCase();
  const who = (ctx, seat) => (seat === ctx.mySeat ? 'You' : ctx.name(seat));

  function cardText(color, number) {
    return `${color ? LETTER[color] : '?'}${number || '?'}`;
  }

  // One card.  `shown`: its face as the view has it; `k`: what its holder knows.
  function card(c, opts) {
    const face = c.color || c.number ? cardText(c.color, c.number) : '';
    const k = c.knowledge;
    const notes = [];
    if (k.not_colors.length) notes.push('not ' + k.not_colors.map((x) => LETTER[x]).join(''));
    if (k.not_numbers.length) notes.push('not ' + k.not_numbers.join(''));
    const knows = [k.color ? LETTER[k.color] : '', k.number || ''].join('');
    const node = el('button', {
      type: 'button', class: `hcard${c.color ? ' c-' + c.color : ' c-unknown'}${opts.touched ? ' touched' : ''}`
        + `${opts.mine ? ' mine' : ''}${opts.selected ? ' selected' : ''}`,
      'data-id': String(c.id), 'data-color': c.color || '', 'data-number': c.number ? String(c.number) : '',
      'data-knows': knows, disabled: opts.onclick ? null : '',
      'aria-label': `${opts.mine ? 'your card' : 'card'} ${c.color ? cap(c.color) : 'unknown colour'} `
        + `${c.number || 'unknown number'}${knows ? `, known ${knows}` : ''}${notes.length ? ', ' + notes.join(', ') : ''}`,
      onclick: opts.onclick || null,
    }, el('span', {class: 'face'}, face || '?'),
    el('span', {class: 'knows', title: 'what its holder knows'}, knows ? `knows ${knows}` : ''),
    el('span', {class: 'ruled-out'}, notes.join(' · ')));
    return node;
  }

  function renderStatus(view, ctx) {
    let text;
    if (view.terminal) {
      text = `Game over: score ${view.score} of 25${view.end_reason ? ` (${view.end_reason})` : ''}.`;
    } else if (view.on_turn === ctx.mySeat && !ctx.replay) {
      text = ctx.answered ? 'Sent. Waiting for the others…' : 'Your turn: tap a card of yours to play or discard it, or give a hint.';
    } else {
      text = `${who(ctx, view.on_turn)}${view.on_turn === ctx.mySeat ? ' are' : ' is'} on turn.`;
    }
    return el('p', {class: 'status-line', 'data-testid': 'status'}, text,
      view.on_turn === ctx.mySeat && !view.terminal ? el('span', {class: 'countdown', title: 'seconds left'}) : null);
  }

  function renderTokens(view) {
    const dots = (n, of, cls) => Array.from({length: of}, (_, i) => el('i', {class: `${cls}${i < n ? ' on' : ''}`}));
    return el('div', {class: 'tokens', 'data-testid': 'tokens'},
      el('span', {class: 'token-row', title: 'hint tokens', 'data-hints': String(view.hint_tokens)},
        `Hints ${view.hint_tokens}/${view.hint_tokens_max} `, ...dots(view.hint_tokens, view.hint_tokens_max, 'hint')),
      el('span', {class: 'token-row', title: 'error tokens left: the third misplay ends the game',
                  'data-errors': String(view.err_tokens)}, `Errors left ${view.err_tokens} `, ...dots(view.err_tokens, 3, 'err')),
      el('span', {class: 'deck', 'data-deck': String(view.deck_count)}, `Deck ${view.deck_count}`),
      view.turns_left !== null ? el('span', {class: 'final'}, `Final round: ${view.turns_left} turn${view.turns_left === 1 ? '' : 's'} left`) : null,
      el('span', {class: 'score', 'data-score': String(view.score)}, `Score ${view.score}`));
  }

  function renderFireworks(view) {
    return el('div', {class: 'fireworks', 'data-testid': 'fireworks'},
      ...COLORS.map((color) => el('div', {class: `firework c-${color}`, 'data-color': color, 'data-top': String(view.fireworks[color])},
        el('span', {class: 'face'}, view.fireworks[color] ? cardText(color, view.fireworks[color]) : LETTER[color] + '–'))));
  }

  function renderDiscards(view) {
    const gone = {};
    for (const c of view.discards) gone[`${c.color}${c.number}`] = (gone[`${c.color}${c.number}`] || 0) + 1;
    const rows = COLORS.map((color) => el('tr', {class: `c-${color}`},
      el('th', {}, LETTER[color]),
      ...[1, 2, 3, 4, 5].map((n) => {
        const g = gone[`${color}${n}`] || 0;
        const dead = g === COPIES[n] && view.fireworks[color] < n;
        return el('td', {class: `${g ? 'some' : ''}${dead ? ' dead' : ''}`, 'data-card': `${color}${n}`,
                         title: `${cap(color)} ${n}: ${g} of ${COPIES[n]} discarded${dead ? ', gone for good' : ''}`},
          g ? `${g}/${COPIES[n]}` : '');
      })));
    return el('details', {class: 'discards', open: ''}, el('summary', {}, `Discards (${view.discards.length})`),
      el('table', {}, el('thead', {}, el('tr', {}, el('th', {}, ''), ...[1, 2, 3, 4, 5].map((n) => el('th', {}, String(n))))),
        el('tbody', {}, ...rows)));
  }

  function hintTouches(hand, kind, value) {
    return hand.filter((c) => (kind === 'color' ? c.color === value : c.number === value)).length;
  }

  function renderHints(view, ctx, seat) {
    if (view.hint_tokens <= 0) return el('p', {class: 'hint'}, 'No hint token left: play or discard.');
    const hand = view.hands[seat];
    const button = (kind, value) => {
      const touches = hintTouches(hand, kind, value);
      const label = kind === 'color' ? LETTER[value] : String(value);
      return el('button', {type: 'button', class: `small hint-btn${kind === 'color' ? ' c-' + value : ''}`,
        'data-hint': `${kind}:${value}`, title: touches ? `touches ${touches}` : 'touches no card',
        'aria-label': `hint ${ctx.name(seat)}: ${kind === 'color' ? cap(value) : value} (touches ${touches || 'no card'})`,
        onclick: () => ctx.act([kind, seat, value])}, label);
    };
    return el('div', {class: 'hint-row', 'data-target': String(seat)},
      el('span', {class: 'hint-label'}, 'Hint: '), ...COLORS.map((c) => button('color', c)),
      ...[1, 2, 3, 4, 5].map((n) => button('number', n)));
  }

  function renderPlayers(view, ctx) {
    const n = view.players;
    const start = ctx.mySeat !== null && ctx.mySeat !== undefined ? ctx.mySeat : 0;
    const last = view.last;
    const touched = new Set(last && last.type === 'hint' ? last.touched : []);
    const myTurn = view.on_turn === ctx.mySeat && !view.terminal && !ctx.replay && ctx.request && !ctx.answered;
    const seats = [];
    for (let i = 0; i < n; i++) {
      const seat = (start + i) % n;
      const mine = seat === ctx.mySeat;
      const hand = view.hands[seat];
      const cards = hand.map((c) => card(c, {
        mine, touched: touched.has(c.id) && last.target === seat, selected: mine && chosen === c.id,
        onclick: mine && myTurn ? () => { chosen = chosen === c.id ? null : c.id; ctx.rerender(); } : null,
      }));
      seats.push(el('section', {class: `hseat${view.on_turn === seat && !view.terminal ? ' on-turn' : ''}${mine ? ' me' : ''}`,
                                'data-seat': String(seat)},
        el('h4', {}, who(ctx, seat), view.on_turn === seat && !view.terminal ? el('span', {class: 'badge turn'}, 'on turn') : null,
          !mine ? ctx.othersCountdown(seat) : null),
        el('div', {class: 'hand'}, ...cards),
        mine && myTurn && chosen !== null && hand.some((c) => c.id === chosen)
          ? el('div', {class: 'buttons card-actions'},
            el('button', {type: 'button', class: 'play', onclick: () => { const id = chosen; chosen = null; ctx.act(['play', id]); }}, 'Play'),
            el('button', {type: 'button', class: 'secondary discard', onclick: () => { const id = chosen; chosen = null; ctx.act(['discard', id]); }}, 'Discard'))
          : null,
        !mine && myTurn ? renderHints(view, ctx, seat) : null));
    }
    return el('div', {class: 'hseats'}, ...seats);
  }

  function describe(h, ctx) {
    if (h.type === 'hint') {
      const what = h.color ? cap(h.color) : String(h.number);
      return `${who(ctx, h.seat)} hinted ${who(ctx, h.target)}: ${what} (${h.touched.length ? h.touched.length + ' card' + (h.touched.length > 1 ? 's' : '') : 'no card'})`;
    }
    if (h.type === 'play') return `${who(ctx, h.seat)} played ${cardText(h.card.color, h.card.number)}: ${h.success ? 'it fits' : 'a misplay'}`;
    if (h.type === 'discard') return `${who(ctx, h.seat)} discarded ${cardText(h.card.color, h.card.number)}`;
    if (h.type === 'game_over') return `Game over: score ${h.score} (${h.reason})`;
    return '';
  }

  const withForced = (text, reasons) => (reasons.length ? `${text} (forced: ${reasons.join('; ')})` : text);

  function renderLog(view, ctx) {
    const forced = (ctx.answers || []).filter((a) => a.forced).map((a) => a.reason);
    if (!restored && !ctx.replay) {
      restored = true;
      for (const m of Arena.data.moves || []) log.set(m.n, withForced(describe(m.happening, ctx), m.forced));
    }
    if (view.last && view.moves && !log.has(view.moves) && !ctx.replay) {
      log.set(view.moves, withForced(describe(view.last, ctx), forced));
    }
    const numbers = [...log.keys()].filter((n) => n < view.moves).sort((a, b) => a - b).slice(-SHOWN);
    return el('div', {class: 'hlog', 'data-testid': 'log', 'data-logged': String(ctx.replay ? 0 : Math.max(0, ...log.keys()))},
      view.last ? el('p', {class: 'last-action', 'data-testid': 'last-action'},
        `Last (move ${view.moves}): ` + withForced(describe(view.last, ctx), forced)) : el('p', {class: 'hint'}, 'No move yet.'),
      ctx.replay ? null : el('ol', {class: 'log-lines', 'data-testid': 'moves'},
        ...numbers.map((n) => el('li', {value: String(n), 'data-move': String(n)}, log.get(n)))));
  }

  Arena.games.hanabi = {
    render(view, ctx) {
      ctx.rerender = () => Arena.rerender();
      ctx.board.replaceChildren(
        renderStatus(view, ctx),
        renderTokens(view),
        renderFireworks(view),
        renderPlayers(view, ctx),
        el('div', {class: 'side'}, renderLog(view, ctx), renderDiscards(view)));
    },
  };
})();
