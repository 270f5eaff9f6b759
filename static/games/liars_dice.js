// Liar's Dice table: players around the table with their dice counts, your dice, the bid
// history of the round, whose turn, the countdown, the last round's outcome, and the controls.
'use strict';

(function () {
  const PIPS = {1: [4], 2: [0, 8], 3: [0, 4, 8], 4: [0, 2, 6, 8], 5: [0, 2, 4, 6, 8], 6: [0, 2, 3, 5, 6, 8]};

  function die(face, extra) {
    const node = el('span', {class: 'die' + (extra ? ' ' + extra : ''), title: face ? String(face) : 'hidden',
                             'aria-label': face ? `die showing ${face}` : 'hidden die'});
    if (face) {
      for (let i = 0; i < 9; i++) node.appendChild(el('i', {class: PIPS[face].includes(i) ? 'pip' : ''}));
    }
    return node;
  }

  function bidText(bid) {
    return bid ? [`${bid[1]} × `, die(bid[0], 'small')] : ['no bid yet'];
  }

  function reasonText(h, ctx) {
    const loser = ctx.name(h.round_loser);
    if (h.reason === 'challenge') {
      const who = ctx.name(h.round_challenger);
      if (!h.bid) return `${who} challenged before any bid and loses a die.`;
      return `${who} challenged ${ctx.name(h.bidder)}'s bid of ${h.bid[1]} × ${h.bid[0]}: ` +
             `the table shows ${h.shown}. ${loser} loses a die.`;
    }
    if (h.reason === 'no_answer') return `${loser} gave no valid answer in time and loses a die.`;
    return `${loser} made an invalid move and loses a die.`;
  }

  function renderPlayers(view, ctx) {
    const order = view.order || view.dice_counts.map((_, i) => i);
    return el('div', {class: 'players'}, order.map((seat) => {
      const n = view.dice_counts[seat];
      const mine = seat === ctx.mySeat;
      const hand = mine && view.your_hand ? view.your_hand : (view.hands ? view.hands[seat] : null);
      const dice = [];
      for (let i = 0; i < n; i++) dice.push(die(hand ? hand[i] : 0, hand ? '' : 'hidden'));
      const classes = ['player'];
      if (seat === view.on_turn) classes.push('on-turn');
      if (n === 0) classes.push('out');
      if (mine) classes.push('me');
      return el('div', {class: classes.join(' '), 'data-seat': seat},
        el('div', {class: 'player-head'},
          el('span', {class: 'name'}, ctx.name(seat), mine ? ' (you)' : ''),
          el('span', {class: 'count'}, n === 0 ? 'out' : `${n} ${n === 1 ? 'die' : 'dice'}`),
          view.games > 1 ? el('span', {class: 'wins'}, `${view.wins[seat]} won`) : null),
        el('div', {class: 'dice'}, dice));
    }));
  }

  function renderStatus(view, ctx) {
    if (view.terminal) {
      const best = Math.max(...view.wins);
      const winners = view.wins.map((w, s) => (w === best ? ctx.name(s) : null)).filter(Boolean);
      return el('div', {class: 'status-line done'},
        `Match over. ${winners.length === 1 ? winners[0] + ' wins' : 'Tie: ' + winners.join(', ')}` +
        (view.games > 1 ? ` (${view.wins.join(' – ')} games).` : '.'));
    }
    const turn = view.on_turn === ctx.mySeat ? 'Your turn' : `${ctx.name(view.on_turn)} to bid`;
    return el('div', {class: 'status-line'},
      el('span', {}, `Game ${view.game_number}/${view.games} · round ${view.round_number} · `),
      el('b', {}, turn), ' ', el('span', {id: 'countdown', class: 'countdown'}));
  }

  function renderBids(view, ctx) {
    const items = (view.bids || []).map(([seat, face, count]) =>
      el('li', {}, el('span', {class: 'who'}, ctx.name(seat)), ' bids ', `${count} × `, die(face, 'small')));
    return el('div', {class: 'bids'},
      el('h4', {}, 'This round'),
      el('div', {class: 'current-bid'}, 'Current bid: ', ...bidText(view.last_bid)),
      items.length ? el('ol', {}, items) : el('p', {class: 'hint'}, 'No bids yet this round.'));
  }

  function renderLastRound(view, ctx) {
    const h = view.last_round;
    if (!h) return null;
    const hands = h.hands.map((hand, seat) => hand.length ?
      el('div', {class: 'revealed'}, el('span', {class: 'who'}, ctx.name(seat)),
         hand.map((f) => die(f, 'small' + (h.bid && f === h.bid[0] ? ' match' : '')))) : null);
    return el('div', {class: 'last-round'},
      el('h4', {}, `Round ${h.round_number} of game ${h.game_number}`),
      el('p', {}, reasonText(h, ctx)),
      h.game_winner !== null ? el('p', {class: 'winner'}, `${ctx.name(h.game_winner)} wins game ${h.game_number}!`) : null,
      el('div', {class: 'hands'}, hands));
  }

  function renderControls(view, ctx) {
    const box = ctx.actions;
    box.replaceChildren();
    const req = ctx.request;
    if (!req || ctx.replay) return;
    const last = view.last_bid;
    if (req.kind === 'challenge_window') {
      box.appendChild(el('div', {class: 'controls'},
        el('p', {}, `${ctx.name(view.on_turn)} is thinking. Challenge the bid of `, ...bidText(last), '?'),
        el('button', {class: 'danger', onclick: () => ctx.act('challenge')}, 'Challenge!'),
        el('button', {class: 'secondary', onclick: () => ctx.act('pass')}, 'Let it stand')));
      return;
    }
    const total = view.dice_counts.reduce((a, b) => a + b, 0);
    let count = last ? last[1] : 1;
    let face = last ? (last[0] < 6 ? last[0] + 1 : 1) : 2;
    if (last && last[0] === 6) count = last[1] + 1;
    const raises = (f, c) => !last || (c >= last[1] && (c > last[1] || f > last[0]));
    const countEl = el('output', {class: 'bid-count'}, String(count));
    const faces = el('div', {class: 'faces'});
    const bidButton = el('button', {class: 'primary', onclick: () => ctx.act(['bid', face, count])});
    const refresh = () => {
      countEl.textContent = String(count);
      faces.replaceChildren(...[1, 2, 3, 4, 5, 6].map((f) => {
        const b = el('button', {class: 'face' + (f === face ? ' chosen' : ''), disabled: !raises(f, count),
                                'aria-label': `face ${f}`, onclick: () => { face = f; refresh(); }}, die(f, 'small'));
        return b;
      }));
      bidButton.disabled = !raises(face, count);
      bidButton.replaceChildren(`Bid ${count} × `, die(face, 'small'));
    };
    const step = (d) => { count = Math.max(1, Math.min(total, count + d)); refresh(); };
    refresh();
    box.appendChild(el('div', {class: 'controls'},
      el('div', {class: 'count-picker'},
        el('button', {class: 'secondary', 'aria-label': 'fewer', onclick: () => step(-1)}, '−'),
        countEl,
        el('button', {class: 'secondary', 'aria-label': 'more', onclick: () => step(1)}, '+'),
        el('span', {class: 'hint'}, 'dice showing')),
      faces,
      el('div', {class: 'buttons'}, bidButton,
        last ? el('button', {class: 'danger', onclick: () => ctx.act('challenge')}, 'Challenge') : null)));
  }

  function renderAnswers(ctx) {
    const forced = (ctx.answers || []).filter((a) => a.forced);
    if (!forced.length) return null;
    return el('div', {class: 'forced'}, forced.map((a) =>
      el('p', {}, `${ctx.name(a.seat)}: ${a.reason}`)));
  }

  Arena.games.liars_dice = {
    render(view, ctx) {
      ctx.board.replaceChildren(
        renderStatus(view, ctx),
        renderPlayers(view, ctx),
        el('div', {class: 'side'}, renderBids(view, ctx), renderLastRound(view, ctx), renderAnswers(ctx)));
      renderControls(view, ctx);
    },
  };
})();
