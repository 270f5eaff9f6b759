// Liar's Dice table: players in play order with their dice (your own faces; everyone else's
// only as a count while the match runs), whose turn it is and the countdown, the bids of the
// round, the last round's outcome with the revealed dice, forced moves with their reason, and
// the controls (bid count + face, challenge; in the challenge window: challenge or let it
// stand).  Every name is untrusted: it only ever goes into text nodes (el() in match.js).
'use strict';

(function () {
  const PIPS = {1: [4], 2: [0, 8], 3: [0, 4, 8], 4: [0, 2, 6, 8], 5: [0, 2, 4, 6, 8], 6: [0, 2, 3, 5, 6, 8]};

  function die(face, extra) {
    const node = el('span', {class: 'die' + (face ? '' : ' hidden') + (extra ? ' ' + extra : ''),
                             title: face ? String(face) : 'hidden die', role: 'img',
                             'aria-label': face ? `die showing ${face}` : 'hidden die', 'data-face': face || null});
    if (face) {
      for (let i = 0; i < 9; i++) node.appendChild(el('i', {class: PIPS[face].includes(i) ? 'pip' : ''}));
    }
    return node;
  }

  // "3 × ⚄" with the face drawn as a die (and spelled out for screen readers and tests).
  function bidText(face, count) {
    return el('span', {class: 'bidtext', 'data-bid': `${count}x${face}`}, `${count} ×`, die(face, 'small'));
  }

  const plural = (n, one, many) => `${n} ${n === 1 ? one : many}`;

  function who(ctx, seat) {
    return seat === ctx.mySeat ? 'You' : ctx.name(seat);
  }

  function whose(ctx, seat) {
    return seat === ctx.mySeat ? 'your' : `${ctx.name(seat)}'s`;
  }

  // Whose bid a challenge judged, always by name: the challenger may be its bidder (a bot may
  // challenge its own bid), and a bid made in the same move by the player on turn never stood.
  function judgedBid(challenger, bidder, ctx) {
    if (bidder !== challenger) return `${whose(ctx, bidder)} bid`;
    return bidder === ctx.mySeat ? 'your own bid' : `${ctx.name(bidder)}'s own bid`;
  }

  function outcomeText(h, ctx) {
    const loser = who(ctx, h.round_loser);
    const loses = h.round_loser === ctx.mySeat ? 'lose' : 'loses';
    if (h.reason === 'challenge') {
      const challenger = who(ctx, h.round_challenger);
      if (!h.bid) return [`${challenger} challenged before anyone bid and `, el('span', {class: 'loser'}, `${loses} a die.`)];
      const onTable = h.hands.reduce((n, hand) => n + hand.length, 0);
      const verdict = h.shown >= h.bid[1] ? 'the bid was good'
        : h.bid[1] > onTable ? `the bid was more than the ${plural(onTable, 'die', 'dice')} on the table` : 'the bid was too high';
      return [`${challenger} challenged ${judgedBid(h.round_challenger, h.bidder, ctx)} of `, bidText(h.bid[0], h.bid[1]),
              `. The table shows ${h.shown}: ${verdict}. `, el('span', {class: 'loser'}, `${loser} ${loses} a die.`)];
    }
    if (h.reason === 'no_answer') {
      return [`${loser} gave no valid answer in time (forced move) and `, el('span', {class: 'loser'}, `${loses} a die.`)];
    }
    return [`${loser} made an invalid move (a bid that does not raise, or a pass on turn) and `,
            el('span', {class: 'loser'}, `${loses} a die.`)];
  }

  function renderStatus(view, ctx) {
    if (view.terminal) {
      const best = Math.max(...view.wins);
      const winners = view.wins.map((w, s) => (w === best ? s : null)).filter((s) => s !== null);
      let text;
      if (winners.length === 1) text = winners[0] === ctx.mySeat ? 'Match over. You win!' : `Match over. ${ctx.name(winners[0])} wins.`;
      else text = `Match over. Tie: ${winners.map((s) => ctx.name(s)).join(', ')}.`;
      if (view.games > 1) text += ` Games won: ${view.wins.map((w, s) => `${ctx.name(s)} ${w}`).join(', ')}.`;
      return el('div', {class: 'status-line done', 'data-testid': 'status'}, text);
    }
    const where = view.games > 1 ? `Game ${view.game_number} of ${view.games} · round ${view.round_number}`
                                 : `Round ${view.round_number}`;
    const mine = view.on_turn === ctx.mySeat && !ctx.replay;
    const turn = mine ? 'Your turn: bid or challenge' : `${ctx.name(view.on_turn)} to bid`;
    return el('div', {class: 'status-line', 'data-testid': 'status'},
      el('span', {class: 'where'}, ctx.replay ? `Replay · ${where}` : where),
      el('span', {class: 'turn' + (mine ? ' mine' : '')}, turn),
      mine ? el('span', {class: 'countdown', title: 'seconds left'}) : ctx.othersCountdown(view.on_turn));
  }

  function renderPlayers(view, ctx) {
    const order = view.order || view.dice_counts.map((_, i) => i);
    return el('div', {class: 'players'}, order.map((seat) => {
      const n = view.dice_counts[seat];
      const mine = seat === ctx.mySeat;
      // Faces: your own hand; every hand in a replay or finished match (view.hands).
      // Spectators and other players get counts only, drawn as hidden dice.
      const hand = mine && view.your_hand && view.your_hand.length ? view.your_hand
        : (view.hands && view.hands.length ? view.hands[seat] : null);
      const dice = [];
      if (!view.terminal) for (let i = 0; i < n; i++) dice.push(die(hand ? hand[i] : 0));
      const classes = ['player'];
      if (seat === view.on_turn && !view.terminal) classes.push('on-turn');
      if (n === 0) classes.push('out');
      if (mine) classes.push('me');
      const last = view.last_bidder === seat && view.last_bid && !view.terminal;
      return el('div', {class: classes.join(' '), 'data-seat': seat},
        el('div', {class: 'player-head'},
          el('span', {class: 'name'}, ctx.name(seat)),
          mine ? el('span', {class: 'tag'}, 'you') : null,
          el('span', {class: 'count'}, n === 0 ? 'out' : plural(n, 'die', 'dice')),
          view.games > 1 ? el('span', {class: 'wins'}, `${plural(view.wins[seat], 'game', 'games')} won`) : null,
          seat === view.on_turn && !view.terminal ? el('span', {class: 'badge'}, 'to bid') : null),
        dice.length ? el('div', {class: 'dice'}, dice) : null,
        last ? el('div', {class: 'said'}, 'bid ', bidText(view.last_bid[0], view.last_bid[1])) : null);
    }));
  }

  function renderBids(view, ctx) {
    if (view.terminal) return null;
    const bids = view.bids || [];
    const items = bids.map(([seat, face, count], i) =>
      el('li', {class: i === bids.length - 1 ? 'latest' : ''},
        el('span', {class: 'who'}, who(ctx, seat)), ' bid ', bidText(face, count)));
    const total = view.dice_counts.reduce((a, b) => a + b, 0);
    // The view keeps the round's latest bids only (a round of ever higher counts may run on).
    const earlier = (view.bids_made || bids.length) - bids.length;
    const past = view.last_bid && view.last_bid[1] > total;
    return el('div', {class: 'bids'},
      el('h4', {}, `This round · ${plural(total, 'die', 'dice')} on the table`),
      el('div', {class: 'current-bid'}, 'Current bid: ',
        view.last_bid ? bidText(view.last_bid[0], view.last_bid[1]) : el('span', {}, 'none yet')),
      past ? el('p', {class: 'hint-light past-table'}, `More than the ${plural(total, 'die', 'dice')} on the table: certainly false.`) : null,
      earlier > 0 ? el('p', {class: 'hint-light'}, `${plural(earlier, 'earlier bid', 'earlier bids')} not shown.`) : null,
      items.length ? el('ol', {class: 'bid-list', start: earlier + 1}, items) : el('p', {class: 'hint'}, 'No bids yet this round.'));
  }

  function renderLastRound(view, ctx) {
    const h = view.last_round;
    if (!h) return null;
    const face = h.bid && h.reason === 'challenge' ? h.bid[0] : null;  // mark the dice that counted
    const rows = [];
    h.hands.forEach((hand, seat) => {
      if (!hand.length) return;
      rows.push(el('div', {class: 'revealed-row'}, el('span', {class: 'who'}, ctx.name(seat)),
        el('span', {class: 'hand', 'data-seat': seat}, hand.map((f) => die(f, 'small' + (f === face ? ' match' : ''))))));
    });
    const forced = ctx.forcedFor(h.game_number, h.round_number);
    // Fresh: the round just ended and the next one has no bid yet; draw the eye to it.
    const fresh = !ctx.replay && !view.terminal && !(view.bids || []).length;
    const title = view.games > 1 ? `Last round (game ${h.game_number}, round ${h.round_number})` : `Last round (round ${h.round_number})`;
    return el('div', {class: 'last-round' + (fresh ? ' fresh' : ''), 'data-testid': 'last-round'},
      el('h4', {}, title),
      el('p', {class: 'outcome'}, outcomeText(h, ctx)),
      forced.map((a) => el('p', {class: 'forced-note'}, `Forced move for ${a.seat === ctx.mySeat ? 'you' : ctx.name(a.seat)}: ${forcedWhy(a)}`)),
      h.game_winner !== null ? el('p', {class: 'winner'},
        h.game_winner === ctx.mySeat ? `You win game ${h.game_number}!` : `${ctx.name(h.game_winner)} wins game ${h.game_number}!`) : null,
      rows.length ? el('div', {}, el('p', {class: 'hint-light'}, face ? `Dice revealed (showing ${face} marked):` : 'Dice revealed:'),
                       el('div', {class: 'revealed-hands'}, rows)) : null);
  }

  // Why a move was forced: the full explanation (``detail``) reaches only the seat itself
  // live, and everyone in a replay; others get the public reason.
  function forcedWhy(answer) {
    return answer.detail || answer.reason || 'no valid answer';
  }

  // Replay: what each seat did at this step.  ``roundOver`` is the step's round_over, if it
  // ended the round: it names the bid the counted challenge judged; a bid or a challenge that
  // something settled before it is marked as not counted.
  function describe(answer, roundOver, ctx) {
    const a = answer.action;
    if (answer.forced) return `forced: ${forcedWhy(answer)}`;
    const reason = roundOver && roundOver.reason;
    const challenge = reason === 'challenge'
      ? (roundOver.round_challenger === ctx.mySeat ? 'your challenge' : `${ctx.name(roundOver.round_challenger)}'s challenge`) : null;
    if (Array.isArray(a) && a[0] === 'bid') {
      const note = !roundOver ? ''
        : challenge ? ` (not placed: ${challenge} ended the round)`
        : reason === 'invalid_move' && roundOver.round_loser === answer.seat ? ' (invalid: not a raise)'
        : ' (not placed: the round was lost by a missing answer)';
      return ['bid ', bidText(a[1], a[2]), note];
    }
    if (a === 'challenge') {
      if (reason !== 'challenge') return 'challenged (not counted: the round was lost by a missing answer)';
      if (roundOver.round_challenger !== answer.seat) return `challenged (not counted: ${challenge} came first in turn order)`;
      if (!roundOver.bid) return 'challenged before any bid';
      return [`challenged ${judgedBid(answer.seat, roundOver.bidder, ctx)} of `, bidText(roundOver.bid[0], roundOver.bid[1])];
    }
    if (a === 'pass') return null;
    return `answered ${JSON.stringify(a)}`;
  }

  function renderStepMoves(view, ctx) {
    if (!ctx.replay) return null;
    if (!ctx.step) return el('div', {class: 'step-moves'}, el('h4', {}, 'Start'), el('p', {}, 'The dice are rolled.'));
    const items = [];
    const prev = ctx.previous && ctx.previous.view;
    const roundOver = (ctx.happenings || []).find((h) => h.type === 'round_over');
    for (const answer of ctx.answers || []) {
      let text = describe(answer, roundOver, ctx);
      if (text === null && prev && answer.seat === prev.on_turn) text = 'passed on turn (not allowed)';
      if (text === null) continue;
      items.push(el('li', {}, el('span', {class: 'who'}, ctx.name(answer.seat)), ': ', text));
    }
    const rest = (ctx.answers || []).length - items.length;
    return el('div', {class: 'step-moves', 'data-testid': 'step-moves'},
      el('h4', {}, `Step ${ctx.step}`),
      items.length ? el('ul', {}, items) : el('p', {}, 'No bid or challenge.'),
      rest > 0 ? el('p', {class: 'hint-light'}, `${plural(rest, 'other player', 'other players')} let it stand.`) : null);
  }

  // The bid being put together on my turn: {version of the request, count, face}.
  let draft = null;

  function renderControls(view, ctx) {
    const box = ctx.actions;
    box.replaceChildren();
    const req = ctx.request;
    if (!req || ctx.replay || view.terminal) return;
    const last = view.last_bid;
    if (ctx.answered) {
      const a = ctx.answered.action;
      const what = Array.isArray(a) ? ['Your bid ', bidText(a[1], a[2]), ' is in.'] :
        a === 'challenge' ? ['You challenged.'] :
        view.last_bidder === ctx.mySeat ? ['Your bid ', bidText(last[0], last[1]), ' is on the table.'] : ['You let the bid stand.'];
      box.appendChild(el('div', {class: 'controls sent'},
        el('p', {class: 'waiting-note'}, ...what, ' Waiting for the others…')));
      return;
    }
    if (req.kind === 'challenge_window' && view.last_bidder === ctx.mySeat) {
      // Challenging one's own bid can only lose a die: let it stand at once, no need to wait.
      setTimeout(() => ctx.act('pass'), 0);
      box.appendChild(el('div', {class: 'controls sent'}, el('p', {class: 'waiting-note'},
        'Your bid of ', bidText(last[0], last[1]), ` is on the table. ${ctx.name(view.on_turn)} is deciding…`)));
      return;
    }
    if (req.kind === 'challenge_window') {
      box.appendChild(el('div', {class: 'controls', 'data-kind': 'challenge_window'},
        el('p', {class: 'prompt'}, `Challenge ${whose(ctx, view.last_bidder)} bid of `, bidText(last[0], last[1]), '?',
          el('span', {class: 'countdown', title: 'seconds left'})),
        el('p', {class: 'hint'}, `${ctx.name(view.on_turn)} is deciding now. If nobody challenges, the bid stands.`),
        el('div', {class: 'buttons'},
          el('button', {class: 'danger', onclick: () => ctx.act('challenge')}, 'Challenge!'),
          el('button', {class: 'secondary', onclick: () => ctx.act('pass')}, 'Let it stand'))));
      return;
    }
    const total = view.dice_counts.reduce((a, b) => a + b, 0);
    const raises = (f, c) => !last || (c >= last[1] && (c > last[1] || f > last[0]));
    const minCount = !last ? 1 : (last[0] === 6 ? last[1] + 1 : last[1]);
    const mine = view.your_hand || [];
    const held = (f) => mine.filter((d) => d === f).length;
    // What the person has picked so far for this request survives a redraw (a view that
    // arrives while they choose); a new request starts afresh.
    if (!draft || draft.version !== req.version) {
      // Start on the face I hold most of (the higher on a tie) that raises at the lowest count.
      const mostHeld = [6, 5, 4, 3, 2, 1].filter((f) => held(f) && raises(f, minCount)).sort((a, b) => held(b) - held(a))[0];
      draft = {version: req.version, count: minCount, face: mostHeld || (!last ? 2 : (last[0] < 6 ? last[0] + 1 : 1))};
    }
    const canBid = minCount <= total;
    // The count can be typed as well as stepped.  A typed number counts once it is in range;
    // until then the Bid button is off and says why.  Nothing happens when the box loses the
    // focus: a redraw between the press and the release of a click (or tap) on a face would
    // lose that click, and the bid would go out with a face the person did not choose.
    let typedOk = true;  // the box holds a count in range
    const countEl = el('input', {class: 'bid-count', type: 'number', inputmode: 'numeric', min: minCount, max: total,
                                 value: draft.count, 'aria-label': 'number of dice',
                                 oninput: () => {
                                   const v = Number(countEl.value);
                                   typedOk = countEl.value !== '' && Number.isInteger(v) && v >= minCount && v <= total;
                                   if (typedOk) draft.count = v;
                                   refresh(false);
                                 }});
    const faceButtons = [1, 2, 3, 4, 5, 6].map((f) =>
      el('button', {class: 'face', 'aria-label': `face ${f}`, 'data-face': f,
                    onclick: () => { draft.face = f; refresh(); }}, die(f, 'small')));
    const faces = el('div', {class: 'faces', role: 'group', 'aria-label': 'face'}, faceButtons);
    // The Bid button sends what its label says: both come from the draft, which only the
    // person's own input changes.
    const bidButton = el('button', {class: 'primary bid', onclick: () => ctx.act(['bid', draft.face, draft.count])});
    const fewer = el('button', {class: 'secondary', 'aria-label': 'fewer dice', onclick: () => step(-1)}, '−');
    const more = el('button', {class: 'secondary', 'aria-label': 'more dice', onclick: () => step(1)}, '+');
    const holding = el('span', {class: 'hint'});
    const refresh = (writeCount = true) => {
      const count = draft.count;
      if (!raises(draft.face, count)) {  // keep the chosen face a legal raise when the count changes
        const ok = [1, 2, 3, 4, 5, 6].find((f) => raises(f, count));
        if (ok) draft.face = ok;
      }
      if (writeCount) { countEl.value = String(count); typedOk = true; }
      fewer.disabled = count <= minCount;
      more.disabled = count >= total;
      faceButtons.forEach((b, i) => {  // updated in place, never replaced (see the count box)
        const f = i + 1;
        b.classList.toggle('chosen', f === draft.face);
        b.disabled = !raises(f, count);
        b.setAttribute('aria-pressed', f === draft.face ? 'true' : 'false');
      });
      bidButton.disabled = !typedOk || !raises(draft.face, count);
      bidButton.replaceChildren('Bid ', bidText(draft.face, count));
      holding.textContent = typedOk ? `You hold ${held(draft.face)} of them; ${total} dice on the table.`
        : `Type a number from ${minCount} to ${total}, or use − and +.`;
    };
    const step = (d) => { draft.count = Math.max(minCount, Math.min(total, draft.count + d)); refresh(); };
    refresh();
    box.appendChild(el('div', {class: 'controls', 'data-kind': 'turn'},
      el('p', {class: 'prompt'}, !last ? 'Your turn. Open the round with a bid.'
        : canBid ? ['Your turn. Raise ', bidText(last[0], last[1]), ' or challenge it.'] : ['Your turn. Challenge ', bidText(last[0], last[1]), '.'],
        el('span', {class: 'countdown', title: 'seconds left'})),
      canBid ? el('div', {class: 'bid-row'},
        el('div', {class: 'count-picker'}, fewer, countEl, more, el('span', {}, 'dice showing')),
        faces) : el('p', {class: 'hint'}, last[1] > total ? `That bid is more than the ${plural(total, 'die', 'dice')} on the table: challenge it.`
                                                        : 'No higher bid is possible: challenge.'),
      canBid ? holding : null,
      el('div', {class: 'buttons'}, canBid ? bidButton : null,
        last ? el('button', {class: 'danger challenge', onclick: () => ctx.act('challenge')},
                  'Challenge', el('span', {class: 'long'}, ` ${whose(ctx, view.last_bidder)} bid`)) : null)));
  }

  Arena.games.liars_dice = {
    render(view, ctx) {
      ctx.board.replaceChildren(
        renderStatus(view, ctx),
        renderPlayers(view, ctx),
        el('div', {class: 'side'}, renderStepMoves(view, ctx), renderLastRound(view, ctx), renderBids(view, ctx)));
      renderControls(view, ctx);
    },
  };
})();
