// Jass (Schieber) table: the four seats around the table (your seat at the bottom when you
// play, else North at the top), the trick in the middle (and the trick just won, until the
// next card is led), the points of this game and the running total per team against the
// target, a scoreboard of every finished game (trump, who declared, points, Match), trump
// and who declared it, the dealer, whose turn it is with the countdown, forced
// moves with their reason, and, at the bottom of the screen, your hand: sorted by suit and
// rank, only the legal cards clickable (follow suit, trump any time, no under-trumping unless
// you hold only trumps, the Buur is never forced), plus the trump choice when it is yours.
//
// Spectators see card backs for every hand; finished matches and replays show every hand.
// Views that arrive in a burst (bots answer in milliseconds) are shown one after another, so
// each card and each finished trick stays on the table long enough to be seen.
//
// Every name is untrusted: it only ever goes into text nodes (el() in match.js).
'use strict';

(function () {
  // --- cards ----------------------------------------------------------------------------
  const SUITS = 'DHSC';
  const RANKS = ['A', 'K', 'Q', 'J', '10', '9', '8', '7', '6'];
  const SUIT_SYMBOL = {D: '♦', H: '♥', S: '♠', C: '♣'};
  const SUIT_NAME = {D: 'Diamonds', H: 'Hearts', S: 'Spades', C: 'Clubs'};
  const RANK_NAME = {A: 'Ace', K: 'King', Q: 'Queen', J: 'Jack'};
  const TRUMPS = [
    {code: 0, symbol: '♦', name: 'Diamonds', suit: 'D'},
    {code: 1, symbol: '♥', name: 'Hearts', suit: 'H'},
    {code: 2, symbol: '♠', name: 'Spades', suit: 'S'},
    {code: 3, symbol: '♣', name: 'Clubs', suit: 'C'},
    {code: 4, symbol: '⬇', name: 'Obe-Abe', hint: 'Ace high'},
    {code: 5, symbol: '⬆', name: 'Une-Ufe', hint: 'Six high'},
  ];
  const SEAT_LETTER = ['N', 'E', 'S', 'W'];
  const SEAT_NAME = ['North', 'East', 'South', 'West'];
  const SOUTH = 2;  // the seat drawn at the bottom when the table is not turned
  const TEAM_LABEL = ['N-S', 'E-W'];
  // Strength within a suit, by rank index (A K Q J 10 9 8 7 6); higher wins.
  const TRUMP_STRENGTH = [6, 5, 4, 8, 3, 7, 2, 1, 0];  // J 9 A K Q 10 8 7 6
  const NATURAL_STRENGTH = [8, 7, 6, 5, 4, 3, 2, 1, 0];
  const UNE_STRENGTH = [0, 1, 2, 3, 4, 5, 6, 7, 8];
  const BASE_SUIT_ORDER = ['D', 'S', 'H', 'C'];  // colours alternate in the hand

  const suitOf = (card) => card[0];
  const rankOf = (card) => card.slice(1);
  const rankIndex = (card) => RANKS.indexOf(rankOf(card));
  const trumpSuit = (trump) => (trump >= 0 && trump < 4 ? SUITS[trump] : null);
  const cardName = (card) => `${RANK_NAME[rankOf(card)] || rankOf(card)} of ${SUIT_NAME[suitOf(card)]}`;

  // How strongly a card bids for a trick led in `lead` (rules.py's _power): trumps above
  // the led suit, other suits never win.
  function power(trump, lead, card) {
    const suit = suitOf(card), r = rankIndex(card);
    if (suit === trumpSuit(trump)) return 100 + TRUMP_STRENGTH[r];
    if (suit !== lead) return -1;
    return (trump === 5 ? UNE_STRENGTH : NATURAL_STRENGTH)[r];
  }

  // The legal cards of `hand` when `trick` (card names, lead first) is on the table under
  // `trump` 0-5; the same rules as games/jass/rules.py (legal_cards), which refuses any other.
  function legal(hand, trick, trump) {
    if (!trick.length) return hand.slice();
    const lead = suitOf(trick[0]);
    const follow = hand.filter((c) => suitOf(c) === lead);
    if (trump >= 4) return follow.length ? follow : hand.slice();
    const ts = trumpSuit(trump);
    const trumps = hand.filter((c) => suitOf(c) === ts);
    if (lead === ts) {  // trump led: follow with trump, but the Buur (trump Jack) is never forced
      const onlyBuur = trumps.length === 1 && rankOf(trumps[0]) === 'J';
      return trumps.length && !onlyBuur ? trumps : hand.slice();
    }
    const best = trick.reduce((a, b) => (power(trump, lead, b) > power(trump, lead, a) ? b : a));
    if (suitOf(best) === ts) {  // a trump leads the trick: no under-trumping
      const others = hand.filter((c) => suitOf(c) !== ts);
      if (!others.length) return hand.slice();  // nothing but trumps: any of them
      const higher = trumps.filter((c) => TRUMP_STRENGTH[rankIndex(c)] > TRUMP_STRENGTH[rankIndex(best)]);
      const base = follow.length ? follow : others;
      return hand.filter((c) => base.includes(c) || higher.includes(c));
    }
    return follow.length ? hand.filter((c) => suitOf(c) === lead || suitOf(c) === ts) : hand.slice();
  }

  // Your hand as you would hold it: trump suit first, then the other suits with colours
  // alternating; within a suit highest first (trump order for the trump suit, Une-Ufe low-high).
  function sortHand(hand, trump) {
    const ts = trumpSuit(trump);
    const order = ts ? [ts, ...BASE_SUIT_ORDER.filter((s) => s !== ts)] : BASE_SUIT_ORDER;
    const strength = (c) => {
      const r = rankIndex(c);
      if (suitOf(c) === ts) return TRUMP_STRENGTH[r];
      return (trump === 5 ? UNE_STRENGTH : NATURAL_STRENGTH)[r];
    };
    return hand.slice().sort((a, b) => order.indexOf(suitOf(a)) - order.indexOf(suitOf(b)) || strength(b) - strength(a));
  }

  function cardFace(card, opts = {}) {
    const classes = ['jcard', 'face', `suit-${suitOf(card)}`];
    if (opts.size) classes.push(opts.size);
    if (opts.trump) classes.push('is-trump');
    if (opts.extra) classes.push(opts.extra);
    const body = [el('span', {class: 'rank'}, rankOf(card)), el('span', {class: 'suit', 'aria-hidden': 'true'}, SUIT_SYMBOL[suitOf(card)])];
    if (opts.onclick) {
      return el('button', {class: classes.join(' '), 'data-card': card, 'aria-label': `Play the ${cardName(card)}`,
                           title: cardName(card), disabled: opts.disabled, onclick: opts.onclick}, ...body);
    }
    return el('span', {class: classes.join(' '), 'data-card': card, role: 'img', 'aria-label': cardName(card), title: cardName(card)}, ...body);
  }

  const cardBack = (size) => el('span', {class: 'jcard back' + (size ? ' ' + size : ''), 'aria-hidden': 'true'});

  // "♥10" inline, coloured, for sentences.
  const cardText = (card) => el('span', {class: `cardtext suit-${suitOf(card)}`, 'data-card': card},
    SUIT_SYMBOL[suitOf(card)], rankOf(card));

  function trumpText(trump) {
    const t = TRUMPS[trump];
    if (!t) return el('span', {}, 'not chosen yet');
    return el('span', {class: 'trumptext' + (t.suit ? ` suit-${t.suit}` : ''), 'data-trump': trump},
      el('span', {class: 'sym', 'aria-hidden': 'true'}, t.symbol), ` ${t.name}`);
  }

  // --- the view -----------------------------------------------------------------------------
  function tricksOf(view) {
    const all = view.tricks || [];
    const finished = all.filter((t) => t.win !== undefined);
    const open = all.length && all[all.length - 1].win === undefined ? all[all.length - 1] : null;
    return {finished, current: open};
  }

  // The seat that plays the i-th card of a trick led by `first` (counter-clockwise).
  const seatOfCard = (first, i) => (first + 3 * i) % 4;

  const who = (ctx, seat) => (seat === ctx.mySeat ? 'You' : ctx.name(seat));
  const whom = (ctx, seat) => (seat === ctx.mySeat ? 'you' : ctx.name(seat));  // inside a sentence
  const teamOf = (seat) => seat % 2;
  const teamNames = (ctx, team) => [team, team + 2].map((s) => who(ctx, s)).join(' & ');
  const myTeam = (ctx) => (ctx.mySeat === null || ctx.mySeat === undefined ? null : teamOf(ctx.mySeat));

  // Where a seat sits on the screen: North at the top, West on the left, East on the right,
  // rotated so that your own seat is at the bottom.  Play runs counter-clockwise, so the
  // player after you (seat + 3) sits on your right and your partner (seat + 2) opposite.
  function position(seat, ctx) {
    const bottom = ctx.mySeat === null || ctx.mySeat === undefined ? SOUTH : ctx.mySeat;
    return ['bottom', 'left', 'top', 'right'][(seat - bottom + 4) % 4];
  }

  function describeAction(action, ctx) {
    if (action === 'push') return ['pushed (Schieben): the partner chooses trump'];
    if (typeof action === 'number') return ['chose trump ', trumpText(action)];
    if (typeof action === 'string' && /^[DHSC]/.test(action)) return ['played ', cardText(action)];
    return [`answered ${JSON.stringify(action)}`];
  }

  // --- pacing: bursts of views shown one after another --------------------------------------
  const HOLD = {card: 450, trick: 1500, deal: 2500};
  const pace = {queue: [], shown: null, until: 0, timer: null};

  function holdFor(item) {
    const types = (item.ctx.happenings || []).map((h) => h.type);
    if (types.includes('deal_over')) return HOLD.deal;
    if (types.includes('trick_over')) return HOLD.trick;
    const played = (item.ctx.answers || []).some((a) => a.seat !== item.ctx.mySeat && typeof a.action === 'string' && a.action !== 'push');
    return played ? HOLD.card : 0;
  }

  function pump() {
    if (pace.timer) return;
    const now = performance.now();
    if (pace.queue.length > 8 || document.hidden) pace.queue.splice(0, pace.queue.length - 1);  // far behind: catch up
    if (now < pace.until && pace.queue.length) {
      pace.timer = setTimeout(() => { pace.timer = null; pump(); }, pace.until - now);
      return;
    }
    const item = pace.queue.shift();
    if (!item) return;
    pace.shown = item;
    draw(item.view, item.ctx);
    Arena.tick();
    pace.until = now + holdFor(item);
    if (pace.queue.length) pump();
  }

  // --- memory across views (live only): forced moves of the current game --------------------
  const memory = {forced: [], seen: new WeakSet(), showLast: false, showAll: false, showAllGames: false};

  function remember(view, ctx) {
    if (memory.seen.has(view)) return;
    memory.seen.add(view);
    const over = (ctx.happenings || []).find((h) => h.type === 'deal_over');
    for (const a of ctx.answers || []) {
      if (a.forced) memory.forced.push({deal: over ? over.deal : view.deal_number, answer: a});
    }
    memory.forced = memory.forced.filter((f) => f.deal >= view.deal_number - 1);
  }

  // Forced moves to show: this game's, and the last game's while its result is on show.
  function forcedNow(view) {
    const {finished, current} = tricksOf(view);
    const fresh = !finished.length && !(current && current.cards.length);
    return memory.forced.filter((f) => f.deal === view.deal_number || (fresh && f.deal === view.deal_number - 1)).map((f) => f.answer);
  }

  // --- drawing ------------------------------------------------------------------------------
  function renderStatus(view, ctx) {
    if (view.terminal) {
      const w = view.winner_team;
      const [a, b] = view.match_points;
      let text;
      if (w === null || w === undefined) text = `Match over: a tie, ${a} to ${b}.`;
      else if (w === myTeam(ctx)) text = `Match over. Your team wins, ${view.match_points[w]} to ${view.match_points[1 - w]}!`;
      else text = `Match over. ${TEAM_LABEL[w]} (${teamNames(ctx, w)}) win, ${view.match_points[w]} to ${view.match_points[1 - w]}.`;
      return el('div', {class: 'status-line done', 'data-testid': 'status'}, text);
    }
    const games = view.max_deals ? `Game ${view.deal_number} of ${view.max_deals}` : `Game ${view.deal_number}`;
    const p = view.current_player;
    const mine = p === ctx.mySeat && !ctx.replay;
    let turn;
    if (mine && ctx.answered) turn = 'Sent. Waiting for the table…';
    else if (view.phase === 'trump') turn = mine ? 'Your turn: choose trump' : `${ctx.name(p)} chooses trump`;
    else turn = mine ? 'Your turn: play a card' : `${ctx.name(p)} to play`;
    return el('div', {class: 'status-line', 'data-testid': 'status'},
      el('span', {class: 'where'}, ctx.replay ? `Replay · ${games}` : games),
      el('span', {class: 'turn' + (mine ? ' mine' : '')}, turn),
      mine ? el('span', {class: 'countdown', title: 'seconds left'}) : ctx.othersCountdown(p));
  }

  function renderFacts(view, ctx) {
    const facts = [el('span', {class: 'fact'}, 'Dealer: ', el('b', {class: 'name'}, who(ctx, view.dealer)))];
    if (view.trump >= 0) {
      const by = view.declarer !== null && view.declarer !== undefined ? whom(ctx, view.declarer) : '?';
      facts.unshift(el('span', {class: 'fact trump-fact', 'data-testid': 'trump'}, 'Trump: ', el('b', {}, trumpText(view.trump)),
        el('span', {class: 'by'}, ` by ${by}`, view.forehand === 0 ? ` (${whom(ctx, view.forehand_player)} pushed)` : '')));
    } else if (!view.terminal) {
      facts.unshift(el('span', {class: 'fact trump-fact', 'data-testid': 'trump'}, 'Trump: ',
        el('b', {}, view.forehand === 0 ? `${who(ctx, view.forehand_player)} pushed to ${whom(ctx, view.current_player)}` : 'not chosen yet')));
    }
    // South sits at the bottom; a person at another seat sees the table turned, and is told so.
    if (ctx.mySeat !== null && ctx.mySeat !== undefined && ctx.mySeat !== SOUTH && !ctx.replay) {
      facts.push(el('span', {class: 'fact turned', 'data-testid': 'turned'},
        `You sit ${SEAT_NAME[ctx.mySeat]}: the table is turned so that you are at the bottom.`));
    }
    return el('div', {class: 'facts'}, facts);
  }

  function renderScores(view, ctx) {
    const {finished} = tricksOf(view);
    const won = [0, 0];
    finished.forEach((t) => { won[teamOf(t.win)] += 1; });
    const target = view.points_to_win;
    const rows = [0, 1].map((team) => {
      const total = view.match_points[team];
      const pct = Math.min(100, Math.round(100 * total / target));
      const isMine = team === myTeam(ctx);
      const lead = view.terminal && view.winner_team === team;
      return el('tr', {class: (isMine ? 'mine' : '') + (lead ? ' won' : ''), 'data-team': team},
        el('th', {scope: 'row'}, el('span', {class: 'team'}, TEAM_LABEL[team]), ' ',
          el('span', {class: 'members name'}, teamNames(ctx, team))),
        el('td', {class: 'num deal-points', 'data-testid': `deal-points-${team}`}, String(view.deal_points[team]),
          view.terminal ? null : el('span', {class: 'tricks-won'}, ` · ${won[team]} ${won[team] === 1 ? 'trick' : 'tricks'}`)),
        el('td', {class: 'num match-points'},
          el('span', {'data-testid': `match-points-${team}`}, String(total)), el('span', {class: 'of'}, ` / ${target}`),
          el('span', {class: 'bar', 'aria-hidden': 'true'}, el('i', {style: `width:${pct}%`}))));
    });
    return el('table', {class: 'jass-scores'},
      el('thead', {}, el('tr', {}, el('th', {}, 'Team'), el('th', {}, view.terminal ? 'Last game' : 'This game'), el('th', {}, `Total (to ${target})`))),
      el('tbody', {}, rows));
  }

  // The cards shown in the middle: the trick being played; between tricks the one just won.
  function tableTrick(view, ctx) {
    const {finished, current} = tricksOf(view);
    let cards = current ? current.cards.slice() : [];
    const first = current ? current.first : null;
    if (ctx.answered && typeof ctx.answered.action === 'string' && ctx.answered.action !== 'push' && current &&
        !cards.includes(ctx.answered.action)) {
      cards.push(ctx.answered.action);  // my card is on its way: show it where it will land
      return {cards, first, pending: ctx.answered.action};
    }
    if (cards.length) return {cards, first};
    const over = (ctx.happenings || []).find((h) => h.type === 'trick_over');
    if (over) return {cards: over.cards, first: over.first, win: over.win, points: over.points, done: true, number: over.trick};
    if (finished.length && (view.phase === 'play' || view.terminal)) {
      const t = finished[finished.length - 1];
      return {cards: t.cards, first: t.first, win: t.win, points: t.points, done: true, number: finished.length};
    }
    return null;
  }

  function renderSeat(seat, view, ctx) {
    const pos = position(seat, ctx);
    const me = seat === ctx.mySeat;
    const onTurn = !view.terminal && seat === view.current_player;
    const classes = ['jass-seat', `pos-${pos}`, `team-${teamOf(seat)}`];
    if (onTurn) classes.push('on-turn');
    if (me) classes.push('me');
    const badges = [];
    if (seat === view.dealer) badges.push(el('span', {class: 'badge dealer', title: 'dealer'}, 'dealer'));
    if (view.trump >= 0 && seat === view.declarer) badges.push(el('span', {class: 'badge declarer', title: 'declared trump'}, 'trump ', trumpText(view.trump)));
    if (onTurn) badges.push(el('span', {class: 'badge turn'}, view.phase === 'trump' ? 'choosing trump' : 'to play'));
    const n = view.hand_sizes[seat];
    let hand = null;
    const known = view.hands ? (view.terminal ? null : view.hands[seat]) : null;
    if (known) {
      hand = el('div', {class: 'hand mini', 'data-seat': seat}, sortHand(known, view.trump).map((c) => cardFace(c, {size: 'mini', trump: suitOf(c) === trumpSuit(view.trump)})));
    } else if (view.terminal && view.dealt) {
      hand = el('div', {class: 'hand mini dealt', 'data-seat': seat, title: 'as dealt'}, el('span', {class: 'dealt-label'}, 'dealt'), sortHand(view.dealt[seat], view.trump).map((c) => cardFace(c, {size: 'mini', trump: suitOf(c) === trumpSuit(view.trump)})));
    } else if (!(me && view.hand && !ctx.replay) && n > 0) {
      const backs = [];
      for (let i = 0; i < n; i++) backs.push(cardBack('mini'));
      hand = el('div', {class: 'hand backs', 'data-seat': seat, title: `${n} cards`}, backs);
    }
    const kind = (ctx.seats[seat] || {}).kind;
    return el('div', {class: classes.join(' '), 'data-seat': seat},
      el('div', {class: 'seat-head'},
        el('span', {class: 'compass', title: SEAT_NAME[seat]}, SEAT_LETTER[seat]),
        el('span', {class: 'name', title: ctx.name(seat)}, ctx.name(seat)),
        me ? el('span', {class: 'tag'}, 'you') : (kind && kind !== 'human' ? el('span', {class: 'tag'}, 'bot') : null),
        view.terminal && view.dealt ? null : el('span', {class: 'count'}, `${n} ${n === 1 ? 'card' : 'cards'}`)),
      badges.length ? el('div', {class: 'badges'}, badges) : null,
      hand);
  }

  function renderTrickCards(trick, view, ctx, size) {
    const bySeat = {};
    trick.cards.forEach((c, i) => { bySeat[seatOfCard(trick.first, i)] = c; });
    const ts = trumpSuit(view.trump);
    return [0, 1, 2, 3].map((seat) => {
      const pos = position(seat, ctx);
      const card = bySeat[seat];
      const classes = ['slot', `pos-${pos}`];
      if (card && trick.done && seat === trick.win) classes.push('winner');
      if (card && seat === trick.first) classes.push('lead');
      if (card && card === trick.pending) classes.push('pending');
      return el('div', {class: classes.join(' '), 'data-seat': seat},
        card ? cardFace(card, {size, trump: suitOf(card) === ts}) : el('span', {class: 'jcard empty ' + (size || '')}),
        card && seat === trick.first ? el('span', {class: 'led', title: 'led this trick'}, 'led') : null,
        el('span', {class: 'slot-name name'}, who(ctx, seat)));
    });
  }

  function renderTable(view, ctx) {
    const trick = tableTrick(view, ctx);
    const center = [];
    center.push(...renderTrickCards(trick || {cards: [], first: 0}, view, ctx, 'mid'));
    let caption = '';
    if (trick && trick.done) {
      caption = `${who(ctx, trick.win)} ${trick.win === ctx.mySeat ? 'win' : 'wins'} trick ${trick.number || ''} · ${trick.points} points`;
    } else if (!view.terminal && view.phase === 'trump') {
      caption = view.current_player === ctx.mySeat && !ctx.replay ? 'Choose trump' : `${who(ctx, view.current_player)} ${view.current_player === ctx.mySeat ? 'choose' : 'chooses'} trump…`;
    } else if (trick && !trick.cards.length) {
      caption = `${who(ctx, view.current_player)} ${view.current_player === ctx.mySeat ? 'lead' : 'leads'}`;
    } else if (!trick && view.phase === 'play') {
      caption = `${who(ctx, view.current_player)} ${view.current_player === ctx.mySeat ? 'lead' : 'leads'}`;
    }
    const seats = [0, 1, 2, 3].map((s) => renderSeat(s, view, ctx));
    return el('div', {class: 'jass-table' + (ctx.mySeat !== null && ctx.mySeat !== undefined && !ctx.replay && view.hand ? ' seated' : '')},
      ...seats,
      el('div', {class: 'trick-area' + (trick && trick.done ? ' done' : ''), 'data-testid': 'trick'},
        el('div', {class: 'cross'}, center),
        el('div', {class: 'trick-caption', 'aria-live': 'polite'}, caption)));
  }

  function renderTrickRow(t, index, view, ctx) {
    const ts = trumpSuit(view.trump);
    return el('li', {class: 'trick-row', 'data-trick': index},
      el('span', {class: 'num'}, `${index}.`),
      el('span', {class: 'cards'}, t.cards.map((c, i) => el('span', {class: 'played' + (seatOfCard(t.first, i) === t.win ? ' winner' : '')},
        cardFace(c, {size: 'mini', trump: suitOf(c) === ts}), el('span', {class: 'by'}, SEAT_LETTER[seatOfCard(t.first, i)])))),
      el('span', {class: 'won'}, `${who(ctx, t.win)} · ${t.points} pts`));
  }

  function renderTricksPanel(view, ctx) {
    const {finished} = tricksOf(view);
    if (!finished.length) return null;
    const last = finished[finished.length - 1];
    const lastBox = memory.showLast ? el('div', {class: 'last-trick', 'data-testid': 'last-trick'},
      el('p', {}, `Trick ${finished.length}: led by ${whom(ctx, last.first)}, won by `, el('b', {}, whom(ctx, last.win)), ` (${last.points} points)`),
      el('ol', {class: 'trick-list'}, renderTrickRow(last, finished.length, view, ctx))) : null;
    const all = memory.showAll ? el('ol', {class: 'trick-list all', 'data-testid': 'all-tricks'},
      finished.map((t, i) => renderTrickRow(t, i + 1, view, ctx))) : null;
    return el('div', {class: 'panel tricks-panel'},
      el('div', {class: 'buttons'},
        el('button', {class: 'small secondary', 'aria-pressed': memory.showLast ? 'true' : 'false', 'data-testid': 'show-last-trick',
                      onclick: () => { memory.showLast = !memory.showLast; redraw(); }}, memory.showLast ? 'Hide last trick' : 'Last trick'),
        el('button', {class: 'small secondary', 'aria-pressed': memory.showAll ? 'true' : 'false',
                      onclick: () => { memory.showAll = !memory.showAll; redraw(); }}, memory.showAll ? 'Hide tricks' : `All tricks (${finished.length})`)),
      lastBox, all);
  }

  // The scoreboard: one row per finished game of the match (view.games, oldest first), so a
  // game's result stays on screen after the next card.  A long match shows its newest games
  // and a button for the earlier ones.
  const SCOREBOARD_ROWS = 6;

  function renderScoreboard(view, ctx) {
    const games = view.games || [];
    if (!games.length) return null;
    const hidden = memory.showAllGames ? 0 : Math.max(0, games.length - SCOREBOARD_ROWS);
    // Short team columns; the partners' names go in a line under the table.
    const teamHead = (team) => el('th', {scope: 'col', class: 'num team' + (team === myTeam(ctx) ? ' mine' : ''),
      title: teamNames(ctx, team)}, TEAM_LABEL[team]);
    const members = [0, 1].map((team) => el('span', {class: 'members' + (team === myTeam(ctx) ? ' mine' : '')},
      el('b', {}, TEAM_LABEL[team]), ' ', el('span', {class: 'name'}, teamNames(ctx, team))));
    const pointsCell = (g, team) => {
      const won = g.points[team] > g.points[1 - team];
      return el('td', {class: 'num' + (won ? ' won' : ''), 'data-team': team}, String(g.points[team]),
        g.match === team ? el('span', {class: 'match-tag', title: 'took all nine tricks'}, 'Match') : null);
    };
    const rows = games.slice(hidden).map((g) => el('tr', {'data-deal': g.deal, class: g.complete ? '' : 'cut'},
      el('th', {scope: 'row', class: 'num'}, String(g.deal)),
      el('td', {}, trumpText(g.trump)),
      el('td', {class: 'by name'}, who(ctx, g.declarer), g.forehand === 0 ? el('span', {class: 'pushed'}, ' (pushed)') : null,
        g.complete ? null : el('span', {class: 'pushed'}, ' · match ended')),
      pointsCell(g, 0), pointsCell(g, 1)));
    const toggle = games.length > SCOREBOARD_ROWS ? el('button', {class: 'small secondary', 'aria-pressed': memory.showAllGames ? 'true' : 'false',
      onclick: () => { memory.showAllGames = !memory.showAllGames; redraw(); }},
      memory.showAllGames ? 'Show the last games only' : `Show all ${games.length} games`) : null;
    return el('div', {class: 'panel scoreboard', 'data-testid': 'scoreboard'},
      el('h4', {}, 'Games'),
      el('table', {class: 'scoreboard-table'},
        el('thead', {}, el('tr', {}, el('th', {scope: 'col', class: 'num'}, '#'), el('th', {scope: 'col'}, 'Trump'),
          el('th', {scope: 'col'}, 'by'), teamHead(0), teamHead(1))),
        el('tbody', {}, rows)),
      el('p', {class: 'teams'}, members[0], ' · ', members[1]),
      toggle);
  }

  function renderDealOver(view, ctx) {
    const d = view.last_deal;
    if (!d) return null;
    const {finished, current} = tricksOf(view);
    const fresh = view.terminal || (!finished.length && !(current && current.cards.length));
    if (!fresh) return null;
    const [a, b] = d.points;
    const lines = [el('h4', {}, `Game ${d.deal} is over`),
      el('p', {}, 'Trump ', trumpText(d.trump), ` declared by ${whom(ctx, d.declarer)}.`),
      el('p', {class: 'deal-result'}, `N-S ${a} · E-W ${b}`)];
    if (d.match !== null && d.match !== undefined) {
      lines.push(el('p', {class: 'winner'}, `Match! ${TEAM_LABEL[d.match]} (${teamNames(ctx, d.match)}) took all nine tricks${view.match_bonus ? ' (+100)' : ''}.`));
    }
    if (!d.complete) lines.push(el('p', {class: 'hint-light'}, 'The match ended during this game.'));
    // A bots-only table that opted in shows the finished game's hands as dealt (never the game in play).
    if (view.last_deal_hands && !view.terminal) {
      lines.push(el('div', {class: 'revealed-hands', 'data-testid': 'last-deal-hands'}, view.last_deal_hands.map((cards, seat) =>
        el('div', {class: 'revealed-row'}, el('span', {class: 'who name'}, ctx.name(seat)),
          el('span', {class: 'hand mini dealt', 'data-seat': seat}, sortHand(cards, d.trump).map((c) => cardFace(c, {size: 'mini', trump: suitOf(c) === trumpSuit(d.trump)})))))));
    }
    return el('div', {class: 'panel deal-over' + (ctx.replay || view.terminal ? '' : ' fresh'), 'data-testid': 'deal-over'}, lines);
  }

  // Why a move was forced: the full explanation (``detail``, which may name the hand) reaches
  // only the seat itself live, and everyone in a replay; others get the public reason.
  function forcedWhy(answer) {
    return answer.detail || answer.reason || 'no valid answer';
  }

  // Forced moves of this game, one line per seat: how many, the latest and why.
  function renderForced(view, ctx) {
    if (ctx.replay) return null;  // the step's moves say it
    const notes = forcedNow(view);
    if (!notes.length) return null;
    const bySeat = new Map();
    for (const a of notes) bySeat.set(a.seat, [...(bySeat.get(a.seat) || []), a]);
    return el('div', {class: 'panel forced', 'data-testid': 'forced'},
      el('h4', {}, 'Forced moves this game'),
      [...bySeat.entries()].map(([seat, list]) => {
        const last = list[list.length - 1];
        return el('p', {class: 'forced-note', 'data-seat': seat},
          el('b', {class: 'name'}, seat === ctx.mySeat ? 'You' : ctx.name(seat)),
          list.length > 1 ? ` (${list.length}×)` : '', ': ', ...describeAction(last.action, ctx),
          el('span', {class: 'reason'}, ` — ${forcedWhy(last)}`));
      }));
  }

  function renderStepMoves(view, ctx) {
    if (!ctx.replay) return null;
    if (!ctx.step) return el('div', {class: 'panel step-moves', 'data-testid': 'step-moves'}, el('h4', {}, 'Start'), el('p', {}, 'The cards are dealt.'));
    const items = (ctx.answers || []).map((a) => el('li', {}, el('span', {class: 'who name'}, ctx.name(a.seat)), ' ', ...describeAction(a.action, ctx),
      a.forced ? el('span', {class: 'forced-note'}, ` (forced: ${forcedWhy(a)})`) : null));
    for (const h of ctx.happenings || []) {
      if (h.type === 'trick_over') items.push(el('li', {class: 'happening'}, `${who(ctx, h.win)} ${h.win === ctx.mySeat ? 'win' : 'wins'} trick ${h.trick} (${h.points} points).`));
      if (h.type === 'deal_over') items.push(el('li', {class: 'happening'}, `Game ${h.deal} over: N-S ${h.points[0]}, E-W ${h.points[1]}.`));
    }
    return el('div', {class: 'panel step-moves', 'data-testid': 'step-moves'}, el('h4', {}, `Step ${ctx.step}`), el('ul', {}, items));
  }

  // How a card is picked here: "tap" on a touch screen, "click" with a mouse (a laptop with
  // a touch screen has a fine pointer too, so it reads "click").
  function pickWord() {
    return window.matchMedia && window.matchMedia('(pointer: coarse)').matches ? 'tap' : 'click';
  }

  // The dock at the bottom of the screen: the prompt, the trump choice, your hand.
  function renderDock(view, ctx) {
    const box = ctx.actions;
    box.replaceChildren();
    const seated = ctx.mySeat !== null && ctx.mySeat !== undefined && view.hand && !ctx.replay && !view.terminal;
    if (!seated) return;
    const req = ctx.request && view.current_player === ctx.mySeat ? ctx.request : null;
    const sent = ctx.answered ? ctx.answered.action : null;
    const parts = [];
    let kind = 'wait';
    let hand = view.hand;
    if (typeof sent === 'string' && sent !== 'push') hand = hand.filter((c) => c !== sent);
    if (req && !ctx.answered && req.kind === 'trump' && view.phase === 'trump') {
      kind = 'trump';
      const partner = (ctx.mySeat + 2) % 4;
      parts.push(el('p', {class: 'prompt'}, view.forehand === 0 ? `${ctx.name(view.forehand_player)} pushed: you choose trump` : 'Your turn: choose trump',
        el('span', {class: 'countdown', title: 'seconds left'})));
      const counts = {};
      view.hand.forEach((c) => { counts[suitOf(c)] = (counts[suitOf(c)] || 0) + 1; });
      parts.push(el('div', {class: 'trump-choice', role: 'group', 'aria-label': 'trump'},
        TRUMPS.map((t) => el('button', {class: 'trump-button' + (t.suit ? ` suit-${t.suit}` : ''), 'data-trump': t.code,
                                        onclick: () => ctx.act(t.code), 'aria-label': `Trump: ${t.name}`},
          el('span', {class: 'sym', 'aria-hidden': 'true'}, t.symbol),
          el('span', {class: 'label'}, t.name),
          el('span', {class: 'sub'}, t.suit ? `${counts[t.suit] || 0} in hand` : t.hint))),
        view.forehand === -1 ? el('button', {class: 'trump-button push secondary', 'data-trump': 'push', onclick: () => ctx.act('push'),
                                             'aria-label': `Push: ${ctx.name(partner)} chooses`,
                                             title: `Push: ${ctx.name(partner)} chooses`},  // the dock may cut the name short
          el('span', {class: 'sym', 'aria-hidden': 'true'}, '⇄'), el('span', {class: 'label'}, 'Push'),
          el('span', {class: 'sub name'}, `${ctx.name(partner)} chooses`)) : null));
    } else if (req && !ctx.answered && req.kind === 'card' && view.phase === 'play') {
      kind = 'card';
      const {current} = tricksOf(view);
      const trick = current ? current.cards : [];
      const ok = legal(view.hand, trick, view.trump);
      let why = trick.length ? `${SUIT_NAME[suitOf(trick[0])]} led` : 'you lead';
      if (ok.length < view.hand.length && trick.length) why += ': the raised cards are allowed';
      parts.push(el('p', {class: 'prompt'}, `Your turn: ${pickWord()} a card`, el('span', {class: 'countdown', title: 'seconds left'}),
        el('span', {class: 'why'}, why)));
      const ts = trumpSuit(view.trump);
      parts.push(el('div', {class: 'hand mine', 'data-testid': 'my-hand', style: `--n:${Math.max(hand.length, 1)}`},
        sortHand(hand, view.trump).map((c) => cardFace(c, {size: 'big', trump: suitOf(c) === ts, extra: ok.includes(c) ? 'legal' : 'illegal',
                                                             disabled: !ok.includes(c), onclick: () => ctx.act(c)}))));
    } else {
      let note;
      if (sent === 'push') note = [`You pushed: ${ctx.name((ctx.mySeat + 2) % 4)} chooses trump.`];
      else if (typeof sent === 'number') note = ['You chose trump ', trumpText(sent), '.'];
      else if (sent !== null && sent !== undefined) note = ['You played ', cardText(sent), '.'];
      else if (view.current_player === ctx.mySeat) note = ['Your move is in. Waiting for the table…'];
      else if (view.phase === 'trump') note = [`${ctx.name(view.current_player)} is choosing trump…`];
      else note = [`${ctx.name(view.current_player)} is playing…`];
      parts.push(el('p', {class: 'waiting-note'}, ...note));
    }
    if (kind !== 'card') {
      const ts = trumpSuit(view.trump);
      parts.push(el('div', {class: 'hand mine', 'data-testid': 'my-hand', style: `--n:${Math.max(hand.length, 1)}`},
        sortHand(hand, view.trump).map((c) => cardFace(c, {size: 'big', trump: suitOf(c) === ts}))));
    }
    box.appendChild(el('div', {class: `controls jass-dock${ctx.answered ? ' sent' : ''}${kind === 'wait' ? ' idle' : ''}`, 'data-kind': kind}, parts));
  }

  // On a phone the page head would push the table under the dock: once, bring the board up.
  function settleScroll(view, ctx) {
    if (memory.scrolled || ctx.replay || ctx.mySeat === null || ctx.mySeat === undefined || view.terminal) return;
    memory.scrolled = true;
    if (window.innerWidth <= 600 && window.scrollY === 0) ctx.board.scrollIntoView({block: 'start'});
  }

  function draw(view, ctx) {
    ctx.board.replaceChildren(el('div', {class: 'jass-layout'},
      renderStatus(view, ctx),
      el('div', {class: 'jass-info'}, renderFacts(view, ctx), renderScores(view, ctx)),
      renderTable(view, ctx),
      el('div', {class: 'jass-side'}, renderScoreboard(view, ctx), renderStepMoves(view, ctx), renderDealOver(view, ctx), renderForced(view, ctx),
        renderTricksPanel(view, ctx))));
    renderDock(view, ctx);
    settleScroll(view, ctx);
  }

  function redraw() {
    if (pace.shown) draw(pace.shown.view, pace.shown.ctx);
    Arena.tick();
  }

  Arena.games.jass = {
    legal,
    sortHand,
    HOLD,
    /** The view on the screen now (views that arrived in a burst may still be queued). */
    shown: () => (pace.shown ? pace.shown.view : null),
    render(view, ctx) {
      if (ctx.replay) {
        clearTimeout(pace.timer);
        pace.timer = null;
        pace.queue = [];
        pace.shown = {view, ctx};
        draw(view, ctx);
        return;
      }
      remember(view, ctx);
      if (pace.shown && pace.shown.view === view) {  // the same view again (a move sent or refused)
        pace.shown.ctx = ctx;
        draw(view, ctx);
        return;
      }
      const queued = pace.queue.find((item) => item.view === view);
      if (queued) { queued.ctx = ctx; return; }
      pace.queue.push({view, ctx});
      pump();
    },
  };
})();
