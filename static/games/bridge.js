// Contract bridge table: the four seats around the table (your seat at the bottom when you
// play, else South), the trick in the middle by seat (and the trick just won, until the next
// card is led; any time with "Last trick"), the auction as a four-column grid (W N E S), the
// contract, declarer, vulnerability per side, board and room, tricks won per side, and the
// score: duplicate points per board, a rubber's sheet above and below the line, a team
// match's IMPs.  At the bottom of the screen: your hand (suits alternating red and black) and,
// on your turn, a bidding box that offers only legal calls or your legal cards to click; when
// you are declarer and dummy's card is asked, you click it in dummy's hand on the table.
//
// What each viewer gets is decided by the server (games/bridge/rules.py, the observations):
// a player their own hand, everyone dummy's from the opening lead on, all four hands only in
// finished matches and replays.  This script draws what the view holds and nothing more.
//
// Every name is untrusted: it only ever goes into text nodes (el() in match.js).
'use strict';

(function () {
  // --- cards and calls (games/bridge/rules.py names: "SA", "HT", "1NT", "P", "X", "XX") ---
  const SEAT_LETTER = 'NESW';
  const SEAT_NAME = ['North', 'East', 'South', 'West'];
  const SOUTH = 2;  // drawn at the bottom when the viewer has no seat
  const SIDE_LABEL = ['N–S', 'E–W'];
  const SUIT_ORDER = ['S', 'H', 'C', 'D'];  // a hand as it is held: red and black alternate
  const SUIT_SYMBOL = {S: '♠', H: '♥', D: '♦', C: '♣'};
  const SUIT_NAME = {S: 'spades', H: 'hearts', D: 'diamonds', C: 'clubs'};
  const RANKS = 'AKQJT98765432';
  const RANK_NAME = {A: 'ace', K: 'king', Q: 'queen', J: 'jack', T: 'ten'};
  const STRAINS = ['C', 'D', 'H', 'S', 'NT'];  // low to high (Law 18)
  const CALL_WORD = {P: 'Pass', X: 'Double', XX: 'Redouble'};
  const AUCTION_COLUMNS = [3, 0, 1, 2];  // W N E S, as bridge diagrams write it

  const suitOf = (card) => card[0];
  const rankOf = (card) => card[1];
  const rankText = (card) => (rankOf(card) === 'T' ? '10' : rankOf(card));
  const cardName = (card) => `${RANK_NAME[rankOf(card)] || rankOf(card)} of ${SUIT_NAME[suitOf(card)]}`;
  const sideOf = (seat) => seat & 1;
  const isCard = (action) => typeof action === 'string' && /^[SHDC][AKQJT2-9]$/.test(action);
  const seated = (ctx) => ctx.mySeat !== null && ctx.mySeat !== undefined;

  function sortHand(cards) {
    return cards.slice().sort((a, b) => SUIT_ORDER.indexOf(suitOf(a)) - SUIT_ORDER.indexOf(suitOf(b))
      || RANKS.indexOf(rankOf(a)) - RANKS.indexOf(rankOf(b)));
  }

  // A bid's number, 0 (1C) to 34 (7NT): a higher number is a higher bid.
  const bidIndex = (call) => 5 * (Number(call[0]) - 1) + STRAINS.indexOf(call.slice(1));
  const bidName = (index) => `${Math.floor(index / 5) + 1}${STRAINS[index % 5]}`;

  // The legal calls of `seat` after `view.calls` (the dealer's first): Pass, any higher bid,
  // Double of an opponents' undoubled bid, Redouble of an opponents' double of your side's bid
  // (Laws 18, 19; rules.py's legal_calls, which refuses any other).
  function legalCalls(view, seat) {
    let lastBid = -1, lastBidder = -1, doubled = 0;
    view.calls.forEach((call, i) => {
      if (call === 'X') doubled = 1;
      else if (call === 'XX') doubled = 2;
      else if (call !== 'P') { lastBid = bidIndex(call); lastBidder = (view.dealer + i) % 4; doubled = 0; }
    });
    const out = ['P'];
    for (let b = lastBid + 1; b < 35; b++) out.push(bidName(b));
    if (lastBid >= 0) {
      const opponents = sideOf(lastBidder) !== sideOf(seat);
      if (doubled === 0 && opponents) out.push('X');
      if (doubled === 1 && !opponents) out.push('XX');
    }
    return out;
  }

  // The legal cards of `hand` with `trick` (card names, lead first) on the table: follow suit
  // if you can (Law 44C).
  function legalCards(hand, trick) {
    if (!trick.length) return hand.slice();
    const follow = hand.filter((c) => suitOf(c) === suitOf(trick[0]));
    return follow.length ? follow : hand.slice();
  }

  function cardFace(card, opts = {}) {
    const classes = ['jcard', 'face', 'bcard', `suit-${suitOf(card)}`];
    if (opts.size) classes.push(opts.size);
    if (opts.extra) classes.push(opts.extra);
    const body = [el('span', {class: 'rank'}, rankText(card)), el('span', {class: 'suit', 'aria-hidden': 'true'}, SUIT_SYMBOL[suitOf(card)])];
    if (opts.onclick) {
      return el('button', {class: classes.join(' '), 'data-card': card, 'aria-label': `${opts.verb || 'Play'} the ${cardName(card)}`,
                           title: cardName(card), disabled: opts.disabled, onclick: opts.onclick}, ...body);
    }
    return el('span', {class: classes.join(' '), 'data-card': card, role: 'img', 'aria-label': cardName(card), title: cardName(card)}, ...body);
  }

  // "♠10" inline, coloured, for sentences.
  const cardText = (card) => el('span', {class: `cardtext suit-${suitOf(card)}`, 'data-card': card}, SUIT_SYMBOL[suitOf(card)], rankText(card));

  // A call as bridge players write it: "1♠", "3NT", "Pass", "X", "XX".
  function callText(call) {
    if (CALL_WORD[call]) return el('span', {class: `bcall call-${call}`, title: CALL_WORD[call]}, call === 'P' ? 'Pass' : call);
    const strain = call.slice(1);
    return el('span', {class: 'bcall' + (strain === 'NT' ? '' : ` suit-${strain}`), title: call}, call[0],
      strain === 'NT' ? 'NT' : el('span', {class: 'sym'}, SUIT_SYMBOL[strain]));
  }

  // "4♠X" / "Passed out".
  function contractText(contract) {
    if (contract === 'Pass') return el('span', {class: 'bcontract'}, 'Passed out');
    const m = /^(\d)(NT|[CDHS])(X{0,2})$/.exec(contract || '');
    if (!m) return el('span', {class: 'bcontract'}, contract || '—');
    return el('span', {class: 'bcontract'}, callText(m[1] + m[2]), m[3]);
  }

  // --- who and where ----------------------------------------------------------------------
  const who = (ctx, seat) => (seat === ctx.mySeat ? 'You' : ctx.name(seat));
  const whom = (ctx, seat) => (seat === ctx.mySeat ? 'you' : ctx.name(seat));

  // Where a seat sits on the screen: your seat (else South) at the bottom; play goes
  // clockwise, so the next player sits on your left and your partner opposite.
  function position(seat, ctx) {
    const bottom = seated(ctx) ? ctx.mySeat : SOUTH;
    return ['bottom', 'left', 'top', 'right'][(seat - bottom + 4) % 4];
  }

  function vulnerable(view, side) {
    return view.vulnerability === 'Both' || view.vulnerability === ['NS', 'EW'][side];
  }

  // The hand shown for `seat`, face up, or null: every hand in a replay (the hands as dealt
  // once the match is over), dummy's once it is on the table.
  function openHand(seat, view, ctx) {
    if (view.terminal && view.dealt) return {cards: view.dealt[seat], dealt: true};
    if (view.hands) return {cards: view.hands[seat]};
    if (seat === view.dummy && view.dummy_hand) return {cards: view.dummy_hand, dummy: true};
    return null;
  }

  // --- drawing ------------------------------------------------------------------------------
  function renderStatus(view, ctx) {
    if (view.terminal) {
      const [a, b] = view.imps || view.totals;
      const unit = view.imps ? 'IMPs' : 'points';
      const mine = seated(ctx) ? sideOf(ctx.mySeat) : null;
      let text;
      if (a === b) text = `Match over: a tie, ${a} ${unit} each.`;
      else {
        const w = a > b ? 0 : 1;
        const score = `${Math.max(a, b)} to ${Math.min(a, b)} ${unit}`;
        text = w === mine ? `Match over. Your side wins, ${score}!` : `Match over. ${SIDE_LABEL[w]} win, ${score}.`;
      }
      return el('div', {class: 'status-line done', 'data-testid': 'status'}, text);
    }
    const where = [`Board ${view.board}`];
    if (view.room) where.push(`${view.room} room`);
    where.push(`deal ${view.results.length + 1} of ${view.boards}`);
    const p = view.player;
    const kind = ctx.request && !ctx.replay ? ctx.request.kind : null;
    let turn;
    if (kind && ctx.answered) turn = 'Sent. Waiting for the table…';
    else if (kind === 'call') turn = 'Your call';
    else if (kind === 'dummy_card') turn = `Your turn: play from dummy (${SEAT_NAME[view.dummy]})`;
    else if (kind) turn = 'Your turn: play a card';
    else if (view.phase === 'auction') turn = `${ctx.name(p)} to call`;
    else if (p === view.dummy) turn = `${who(ctx, view.declarer)} ${view.declarer === ctx.mySeat ? 'play' : 'plays'} from dummy`;
    else turn = `${ctx.name(p)} to play`;
    const actor = view.to_act.length ? view.to_act[0] : p;
    return el('div', {class: 'status-line', 'data-testid': 'status'},
      el('span', {class: 'where'}, (ctx.replay ? 'Replay · ' : '') + where.join(' · ')),
      el('span', {class: 'turn' + (kind ? ' mine' : '')}, turn),
      kind ? el('span', {class: 'countdown', title: 'seconds left'}) : ctx.othersCountdown(actor));
  }

  function renderFacts(view, ctx) {
    const facts = [];
    if (view.contract && view.contract !== 'Pass') {
      facts.push(el('span', {class: 'fact', 'data-testid': 'contract'}, 'Contract: ', el('b', {}, contractText(view.contract)),
        ' by ', el('b', {class: 'name'}, whom(ctx, view.declarer)), ` (${SEAT_NAME[view.declarer]})`));
    } else if (!view.terminal) {
      facts.push(el('span', {class: 'fact', 'data-testid': 'contract'}, 'Contract: ', el('b', {}, 'bidding')));
    }
    facts.push(el('span', {class: 'fact'}, 'Dealer: ', el('b', {}, SEAT_NAME[view.dealer])));
    facts.push(el('span', {class: 'fact', 'data-testid': 'vulnerability'}, 'Vulnerable: ',
      [0, 1].map((side) => el('span', {class: 'vul' + (vulnerable(view, side) ? ' yes' : ''),
                                        title: vulnerable(view, side) ? 'vulnerable' : 'not vulnerable'},
        SIDE_LABEL[side], vulnerable(view, side) ? ' vul' : ' not'))));
    if (view.phase === 'play' || (view.terminal && view.contract && view.contract !== 'Pass')) {
      const need = view.declarer >= 0 && view.contract ? 6 + Number(view.contract[0]) : null;
      facts.push(el('span', {class: 'fact', 'data-testid': 'tricks-won'}, 'Tricks: ',
        [0, 1].map((side) => el('b', {class: 'won', 'data-side': side}, `${SIDE_LABEL[side]} ${view.tricks_won[side]}`)),
        need ? el('span', {class: 'by'}, ` (declarer needs ${need})`) : null));
    }
    return el('div', {class: 'facts bridge-facts'}, facts);
  }

  function renderSeat(seat, view, ctx) {
    const pos = position(seat, ctx);
    const me = seat === ctx.mySeat && !ctx.replay;
    const onTurn = !view.terminal && seat === view.player;
    const classes = ['bseat', `pos-${pos}`, `team-${sideOf(seat)}`];
    if (onTurn) classes.push('on-turn');
    if (me) classes.push('me');
    const badges = [];
    if (seat === view.dealer && view.phase === 'auction') badges.push(el('span', {class: 'badge dealer'}, 'dealer'));
    if (seat === view.declarer) badges.push(el('span', {class: 'badge declarer'}, 'declarer'));
    if (seat === view.dummy) badges.push(el('span', {class: 'badge dummy'}, 'dummy'));
    if (onTurn) {
      const label = view.phase === 'auction' ? 'to call' : seat === view.dummy ? 'to play (declarer)' : 'to play';
      badges.push(el('span', {class: 'badge turn'}, label));
    }
    const open = openHand(seat, view, ctx);
    let hand = null;
    if (open && !(me && !view.terminal)) hand = renderOpenHand(seat, open, view, ctx);
    const kind = (ctx.seats[seat] || {}).kind;
    const n = view.hand_sizes[seat];
    return el('div', {class: classes.join(' '), 'data-seat': seat},
      el('div', {class: 'seat-head'},
        el('span', {class: 'compass', title: SEAT_NAME[seat]}, SEAT_LETTER[seat]),
        el('span', {class: 'name', title: ctx.name(seat)}, ctx.name(seat)),
        me ? el('span', {class: 'tag'}, 'you') : (kind && kind !== 'human' ? el('span', {class: 'tag'}, 'bot') : null),
        vulnerable(view, sideOf(seat)) ? el('span', {class: 'vul-dot', title: 'vulnerable'}, 'vul') : null,
        open || view.terminal ? null : el('span', {class: 'count'}, `${n} ${n === 1 ? 'card' : 'cards'}`)),
      badges.length ? el('div', {class: 'badges'}, badges) : null,
      hand);
  }

  // A hand face up in four suit columns (as dummy lies on the table); dummy's legal cards are
  // buttons when you are declarer and dummy's card is asked.
  function renderOpenHand(seat, open, view, ctx) {
    const asked = open.dummy && ctx.request && ctx.request.kind === 'dummy_card' && !ctx.answered && !ctx.replay;
    const ok = asked ? legalCards(open.cards, view.trick.cards) : [];
    const columns = SUIT_ORDER.map((suit) => {
      const cards = sortHand(open.cards.filter((c) => suitOf(c) === suit));
      return el('div', {class: `suit-col suit-${suit}`, 'data-suit': suit},
        el('span', {class: 'suit-head', 'aria-label': SUIT_NAME[suit]}, SUIT_SYMBOL[suit]),
        cards.length ? cards.map((c) => (asked
          ? cardFace(c, {size: 'mini', extra: ok.includes(c) ? 'legal' : 'illegal', disabled: !ok.includes(c),
                         verb: 'Play dummy’s', onclick: () => ctx.act(c)})
          : cardFace(c, {size: 'mini'}))) : el('span', {class: 'void', title: 'void'}, '—'));
    });
    const label = open.dealt ? 'as dealt' : open.dummy ? 'dummy' : null;
    return el('div', {class: 'bhand faceup' + (asked ? ' asked' : ''), 'data-seat': seat, 'data-testid': open.dummy ? 'dummy-hand' : null,
                      title: label}, columns);
  }

  // The cards in the middle: the trick being played; between tricks the one just won.
  function tableTrick(view, ctx) {
    let cards = view.trick.cards.slice();
    const first = view.trick.first;
    const sent = ctx.answered && !ctx.replay ? ctx.answered.action : null;
    if (isCard(sent) && view.phase === 'play' && !cards.includes(sent)) {
      cards.push(sent);  // my card is on its way: show it where it will land
      return {cards, first, pending: sent};
    }
    if (cards.length) return {cards, first};
    const tricks = view.tricks || [];
    if (tricks.length) {
      const t = tricks[tricks.length - 1];
      return {cards: t.cards, first: t.first, winner: t.winner, done: true, number: tricks.length};
    }
    return null;
  }

  function renderTable(view, ctx) {
    const trick = tableTrick(view, ctx);
    const bySeat = {};
    if (trick) trick.cards.forEach((c, i) => { bySeat[(trick.first + i) % 4] = c; });
    const slots = [0, 1, 2, 3].map((seat) => {
      const card = bySeat[seat];
      const classes = ['slot', `pos-${position(seat, ctx)}`];
      if (card && trick.done && seat === trick.winner) classes.push('winner');
      if (card && card === trick.pending) classes.push('pending');
      return el('div', {class: classes.join(' '), 'data-seat': seat},
        card ? cardFace(card, {size: 'mid'}) : el('span', {class: 'jcard empty mid'}),
        card && seat === trick.first ? el('span', {class: 'led', title: 'led this trick'}, 'led') : null,
        el('span', {class: 'slot-name name'}, who(ctx, seat)));
    });
    let caption = '';
    if (trick && trick.done) caption = `${who(ctx, trick.winner)} ${trick.winner === ctx.mySeat ? 'win' : 'wins'} trick ${trick.number}`;
    else if (view.phase === 'play' && !view.trick.cards.length && !trick) caption = `${who(ctx, view.player)} ${view.player === ctx.mySeat ? 'lead' : 'leads'}`;
    else if (view.phase === 'auction') caption = 'Bidding';
    return el('div', {class: 'bridge-table'},
      [0, 1, 2, 3].map((s) => renderSeat(s, view, ctx)),
      el('div', {class: 'trick-area' + (trick && trick.done ? ' done' : ''), 'data-testid': 'trick'},
        el('div', {class: 'cross'}, slots),
        el('div', {class: 'trick-caption', 'aria-live': 'polite'}, caption)));
  }

  // The auction, four columns W N E S, the dealer's first call in the dealer's column.
  function renderAuction(view, ctx) {
    if (!view.calls.length && view.phase !== 'auction') return null;
    const cells = [];
    const skip = AUCTION_COLUMNS.indexOf(view.dealer);
    for (let i = 0; i < skip; i++) cells.push(el('td', {class: 'before'}));
    view.calls.forEach((call, i) => cells.push(el('td', {'data-call': call, 'data-seat': (view.dealer + i) % 4}, callText(call))));
    if (view.phase === 'auction' && !view.terminal) cells.push(el('td', {class: 'next', title: `${ctx.name(view.player)} to call`}, '?'));
    const rows = [];
    for (let i = 0; i < cells.length; i += 4) rows.push(el('tr', {}, cells.slice(i, i + 4)));
    return el('div', {class: 'panel auction', 'data-testid': 'auction'},
      el('table', {class: 'auction-grid'},
        el('thead', {}, el('tr', {}, AUCTION_COLUMNS.map((seat) => el('th', {scope: 'col', class: vulnerable(view, sideOf(seat)) ? 'vul' : '',
          title: `${SEAT_NAME[seat]}: ${ctx.name(seat)}`}, SEAT_LETTER[seat], seat === ctx.mySeat ? el('span', {class: 'you'}, ' (you)') : null)))),
        el('tbody', {}, rows)));
  }

  // --- the score ----------------------------------------------------------------------------
  function signed(n) { return n > 0 ? `+${n}` : String(n); }

  function renderScore(view, ctx) {
    if (view.scoring === 'rubber' && view.rubber) return renderRubber(view, ctx);
    const results = view.results || [];
    const team = view.replay;
    const head = el('tr', {}, el('th', {scope: 'col'}, 'Board'), team ? el('th', {scope: 'col'}, 'Room') : null,
      el('th', {scope: 'col'}, 'Result'), el('th', {scope: 'col', class: 'num'}, 'N–S'), el('th', {scope: 'col', class: 'num'}, 'E–W'),
      team ? el('th', {scope: 'col', class: 'num', title: 'IMPs for N–S (+) or E–W (−)'}, 'IMPs') : null);
    const rows = results.map((r, i) => el('tr', {'data-board': r.board, class: i === results.length - 1 ? 'latest' : ''},
      el('td', {}, String(r.board)), team ? el('td', {}, r.room || '') : null,
      el('td', {class: 'result', 'data-testid': 'board-result'}, resultText(r)),
      el('td', {class: 'num'}, r.score > 0 ? String(r.score) : ''), el('td', {class: 'num'}, r.score < 0 ? String(-r.score) : ''),
      team ? el('td', {class: 'num'}, r.imps === null || r.imps === undefined ? '' : signed(r.imps)) : null));
    const [a, b] = team ? view.imps : view.totals;
    const total = el('p', {class: 'total', 'data-testid': 'score-total'},
      `${team ? 'IMPs' : 'Points'}${view.terminal ? '' : ' so far'}: `, el('b', {}, `N–S ${a}`), ' · ', el('b', {}, `E–W ${b}`));
    return el('div', {class: 'panel bridge-score', 'data-testid': 'score'},
      el('h4', {}, team ? 'Team match' : 'Duplicate scores'),
      results.length ? el('table', {class: 'results'}, el('thead', {}, head), el('tbody', {}, rows))
        : el('p', {class: 'hint-light'}, 'No board finished yet.'),
      total);
  }

  // A finished board: "4♠ by South, made 11" from its result text ("4SS+1", "3NTXE-2", "Pass").
  function resultText(r) {
    if (r.contract === 'Pass' || r.declarer === null || r.declarer === undefined) return el('span', {}, 'Passed out');
    const over = /([=+-]\d*)$/.exec(r.result || '');
    const made = over ? over[1] : '';
    return el('span', {title: r.result}, contractText(r.contract), ` ${SEAT_LETTER[r.declarer]} `,
      el('b', {class: made.startsWith('-') ? 'down' : 'made'}, made));
  }

  function renderRubber(view, ctx) {
    const s = view.rubber;
    const row = (label, values, cls) => el('tr', {class: cls || ''}, el('th', {scope: 'row'}, label),
      el('td', {class: 'num'}, String(values[0])), el('td', {class: 'num'}, String(values[1])));
    const last = (view.results || [])[view.results.length - 1];
    return el('div', {class: 'panel bridge-score rubber', 'data-testid': 'score'},
      el('h4', {}, 'Rubber'),
      el('table', {class: 'results'},
        el('thead', {}, el('tr', {}, el('th', {}), el('th', {scope: 'col', class: 'num'}, 'N–S'), el('th', {scope: 'col', class: 'num'}, 'E–W'))),
        el('tbody', {}, row('Above the line', s.above), row('Below the line', s.below, 'line'), row('This game', s.part),
          row('Games won', s.games), row('Total', view.totals, 'total'))),
      last ? el('p', {class: 'last-result', 'data-testid': 'board-result'}, 'Last deal: ', resultText(last)) : null,
      s.finished && s.winner !== null && s.winner !== undefined ? el('p', {class: 'winner'}, `${SIDE_LABEL[s.winner]} won the rubber.`) : null);
  }

  // --- tricks on demand ---------------------------------------------------------------------
  const memory = {showLast: false, showAll: false};

  function renderTrickRow(t, index, ctx) {
    return el('li', {class: 'trick-row', 'data-trick': index},
      el('span', {class: 'num'}, `${index}.`),
      el('span', {class: 'cards'}, t.cards.map((c, i) => {
        const seat = (t.first + i) % 4;
        return el('span', {class: 'played' + (seat === t.winner ? ' winner' : '')}, cardFace(c, {size: 'mini'}),
          el('span', {class: 'by'}, SEAT_LETTER[seat]));
      })),
      el('span', {class: 'won'}, `won by ${whom(ctx, t.winner)}`));
  }

  function renderTricksPanel(view, ctx, redraw) {
    const tricks = view.tricks || [];
    if (!tricks.length) return null;
    const toggle = (key) => () => { memory[key] = !memory[key]; redraw(); };
    return el('div', {class: 'panel tricks-panel'},
      el('div', {class: 'buttons'},
        el('button', {class: 'small secondary', 'aria-pressed': String(memory.showLast), 'data-testid': 'show-last-trick',
                      onclick: toggle('showLast')}, memory.showLast ? 'Hide last trick' : 'Last trick'),
        el('button', {class: 'small secondary', 'aria-pressed': String(memory.showAll), onclick: toggle('showAll')},
          memory.showAll ? 'Hide tricks' : `All tricks (${tricks.length})`)),
      memory.showLast ? el('ol', {class: 'trick-list', 'data-testid': 'last-trick'}, renderTrickRow(tricks[tricks.length - 1], tricks.length, ctx)) : null,
      memory.showAll ? el('ol', {class: 'trick-list all'}, tricks.map((t, i) => renderTrickRow(t, i + 1, ctx))) : null);
  }

  // A finished board's result while the next one has not begun (and at the end).
  function renderBoardOver(view, ctx) {
    const over = (ctx.happenings || []).find((h) => h.type === 'board_over');
    const fresh = view.phase === 'auction' && !view.calls.length;
    const r = over || (fresh || view.terminal ? (view.results || [])[view.results.length - 1] : null);
    if (!r) return null;
    const ns = r.score;
    return el('div', {class: 'panel board-over' + (over && !ctx.replay ? ' fresh' : ''), 'data-testid': 'board-over'},
      el('h4', {}, `Board ${r.board}${r.room ? ` (${r.room} room)` : ''} is over`),
      el('p', {class: 'deal-result'}, resultText(r), ' · ',
        ns === 0 ? 'no score' : `${ns > 0 ? 'N–S' : 'E–W'} score ${Math.abs(ns)}`,
        r.imps !== null && r.imps !== undefined ? ` · ${r.imps === 0 ? 'no IMPs' : `${Math.abs(r.imps)} IMPs to ${r.imps > 0 ? 'N–S' : 'E–W'}`}` : ''));
  }

  function describeAction(action, seat, view) {
    if (isCard(action)) return ['played ', cardText(action)];
    if (typeof action === 'string') return [action === 'P' ? 'passed' : action === 'X' ? 'doubled' : action === 'XX' ? 'redoubled' : 'bid ', CALL_WORD[action] ? '' : callText(action)];
    return [`answered ${JSON.stringify(action)}`];
  }

  function renderStepMoves(view, ctx) {
    if (!ctx.replay) return null;
    if (!ctx.step) return el('div', {class: 'panel step-moves', 'data-testid': 'step-moves'}, el('h4', {}, 'Start'), el('p', {}, 'The cards are dealt.'));
    const items = (ctx.answers || []).map((a) => el('li', {}, el('span', {class: 'who name'}, ctx.name(a.seat)), ' ',
      ...describeAction(a.action, a.seat, view), a.forced ? el('span', {class: 'forced-note'}, ` (forced: ${a.detail || a.reason || 'no valid answer'})`) : null));
    for (const h of ctx.happenings || []) {
      if (h.type === 'card' && h.seat !== h.by) items.push(el('li', {class: 'happening'}, `(from dummy, ${SEAT_NAME[h.seat]})`));
      if (h.type === 'auction_closed') items.push(el('li', {class: 'happening'}, 'Contract ', contractText(h.contract), ` by ${SEAT_NAME[h.declarer]}.`));
      if (h.type === 'trick_over') items.push(el('li', {class: 'happening'}, `${ctx.name(h.winner)} wins trick ${h.trick}.`));
      if (h.type === 'board_over') items.push(el('li', {class: 'happening'}, `Board ${h.board} over: `, resultText(h), '.'));
    }
    return el('div', {class: 'panel step-moves', 'data-testid': 'step-moves'}, el('h4', {}, `Step ${ctx.step}`), el('ul', {}, items));
  }

  // --- the dock: your hand, the bidding box -------------------------------------------------
  const box = {level: null, version: null};  // the level chosen in the bidding box, per request

  function pickWord() {
    return window.matchMedia && window.matchMedia('(pointer: coarse)').matches ? 'tap' : 'click';
  }

  function renderBiddingBox(view, ctx) {
    if (box.version !== ctx.request.version) { box.level = null; box.version = ctx.request.version; }
    const legal = legalCalls(view, ctx.mySeat);
    const redraw = () => renderDock(view, ctx);
    const levels = [1, 2, 3, 4, 5, 6, 7].map((level) => {
      const open = legal.some((c) => c[0] === String(level));
      return el('button', {class: 'level' + (box.level === level ? ' chosen' : ''), 'data-level': level, disabled: !open,
                           'aria-pressed': String(box.level === level),
                           onclick: () => { box.level = level; redraw(); }}, String(level));
    });
    const strains = STRAINS.map((strain) => {
      const call = box.level ? `${box.level}${strain}` : null;
      const ok = call && legal.includes(call);
      return el('button', {class: 'strain' + (strain === 'NT' ? '' : ` suit-${strain}`), 'data-strain': strain, 'data-call': call,
                           disabled: !ok, 'aria-label': call ? `Bid ${box.level} ${strain === 'NT' ? 'no trump' : SUIT_NAME[strain]}` : `${strain === 'NT' ? 'No trump' : SUIT_NAME[strain]}: choose a level first`,
                           onclick: () => ctx.act(call)}, strain === 'NT' ? 'NT' : SUIT_SYMBOL[strain]);
    });
    const others = ['P', 'X', 'XX'].map((call) => el('button', {class: `other call-${call}`, 'data-call': call, disabled: !legal.includes(call),
                                                               onclick: () => ctx.act(call)}, CALL_WORD[call]));
    return el('div', {class: 'bidding-box', role: 'group', 'aria-label': 'bidding box', 'data-testid': 'bidding-box'},
      el('div', {class: 'levels'}, levels), el('div', {class: 'strains'}, strains), el('div', {class: 'others'}, others));
  }

  function renderDock(view, ctx) {
    const dock = ctx.actions;
    dock.replaceChildren();
    if (!seated(ctx) || !view.hand || ctx.replay || view.terminal) return;
    const req = ctx.request && !ctx.answered ? ctx.request : null;
    const sent = ctx.answered ? ctx.answered.action : null;
    const parts = [];
    let hand = view.hand;
    if (isCard(sent)) hand = hand.filter((c) => c !== sent);
    let kind = 'wait';
    let playable = [];
    if (req && req.kind === 'call' && view.phase === 'auction') {
      kind = 'call';
      parts.push(el('p', {class: 'prompt'}, 'Your call: ', el('span', {class: 'why'}, box.level ? 'now the strain' : 'a level, then the strain; or Pass'),
        el('span', {class: 'countdown', title: 'seconds left'})));
      parts.push(renderBiddingBox(view, ctx));
    } else if (req && req.kind === 'card' && view.phase === 'play') {
      kind = 'card';
      playable = legalCards(view.hand, view.trick.cards);
      const led = view.trick.cards.length ? `${SUIT_NAME[suitOf(view.trick.cards[0])]} led` : 'you lead';
      parts.push(el('p', {class: 'prompt'}, `Your turn: ${pickWord()} a card`, el('span', {class: 'countdown', title: 'seconds left'}),
        el('span', {class: 'why'}, led)));
    } else if (req && req.kind === 'dummy_card' && view.phase === 'play') {
      kind = 'dummy_card';
      const led = view.trick.cards.length ? `${SUIT_NAME[suitOf(view.trick.cards[0])]} led` : 'dummy leads';
      parts.push(el('p', {class: 'prompt'}, `Your turn: ${pickWord()} a card in dummy’s hand (${SEAT_NAME[view.dummy]}, ${position(view.dummy, ctx)})`,
        el('span', {class: 'countdown', title: 'seconds left'}), el('span', {class: 'why'}, led)));
    } else {
      let note;
      if (isCard(sent)) note = ['You played ', cardText(sent), '.'];
      else if (sent) note = ['You called ', callText(sent), '.'];
      else if (view.phase === 'play' && view.player === ctx.mySeat && view.player === view.dummy) note = [`You are dummy: ${ctx.name(view.declarer)} plays your cards.`];
      else if (view.phase === 'auction') note = [`${ctx.name(view.player)} is calling…`];
      else if (view.player === view.dummy) note = [`${who(ctx, view.declarer)} ${view.declarer === ctx.mySeat ? 'play' : 'plays'} from dummy…`];
      else note = [`${ctx.name(view.player)} is playing…`];
      parts.push(el('p', {class: 'waiting-note'}, ...note));
    }
    parts.push(el('div', {class: 'hand mine bhand-mine', 'data-testid': 'my-hand', style: `--n:${Math.max(hand.length, 1)}`},
      sortHand(hand).map((c) => (kind === 'card'
        ? cardFace(c, {size: 'big', extra: playable.includes(c) ? 'legal' : 'illegal', disabled: !playable.includes(c), onclick: () => ctx.act(c)})
        : cardFace(c, {size: 'big'})))));
    dock.appendChild(el('div', {class: `controls bridge-dock${ctx.answered ? ' sent' : ''}${kind === 'wait' ? ' idle' : ''}`, 'data-kind': kind}, parts));
  }

  // On a phone the page head would push the table under the dock: once, bring the board up.
  function settleScroll(view, ctx) {
    if (memory.scrolled || ctx.replay || !seated(ctx) || view.terminal) return;
    memory.scrolled = true;
    if (window.innerWidth <= 600 && window.scrollY === 0) ctx.board.scrollIntoView({block: 'start'});
  }

  let shown = null;  // {view, ctx} on the screen, for redraws on a click

  function draw(view, ctx) {
    shown = {view, ctx};
    const redraw = () => { draw(shown.view, shown.ctx); Arena.tick(); };
    const bidding = view.phase === 'auction' && !view.terminal;
    ctx.board.replaceChildren(el('div', {class: 'bridge-layout'},
      renderStatus(view, ctx),
      // The auction above the table while it runs, below it (on a phone) once the play began.
      el('div', {class: 'bridge-info'}, renderFacts(view, ctx), bidding ? renderAuction(view, ctx) : null),
      renderTable(view, ctx),
      el('div', {class: 'bridge-side'}, renderBoardOver(view, ctx), renderStepMoves(view, ctx), bidding ? null : renderAuction(view, ctx),
        renderScore(view, ctx), renderTricksPanel(view, ctx, redraw))));
    renderDock(view, ctx);
    settleScroll(view, ctx);
  }

  Arena.games.bridge = {
    legalCalls,
    legalCards,
    sortHand,
    // Replay jumps: a board ends a "game", a trick a "trick".
    marks: (frame) => [...new Set((frame.happenings || []).map((h) => ({board_over: 'game', trick_over: 'trick'})[h.type]).filter(Boolean))],
    render(view, ctx) { draw(view, ctx); },
  };
})();
