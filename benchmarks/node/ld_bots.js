// Liar's Dice bots for Node, written the way course bots usually are (the reference
// simulator's own bots are Node too): `net.connect`, a `data` handler, `socket.write` per
// answer, Node's defaults otherwise (Nagle's algorithm on: no setNoDelay).  They answer every
// request at once with the same policy as the Python bots of liars_dice_throughput.py: on
// turn, open with [face, 1], then raise the count by one (past the dice on the table too, as
// the reference's bots/basic.js does) or (35%) challenge; else "pass".
//
// Usage: node ld_bots.js PORT MATCHES PAIRS  -> prints {"requests", "round_overs", "matches",
// "seconds"} as one JSON line when every match is over (the server closes each connection).
'use strict';
const net = require('net');

const [port, matches, pairs] = process.argv.slice(2).map(Number);
const stats = {requests: 0, round_overs: 0, matches: 0};
const started = process.hrtime.bigint();
let running = 0;

function decide(msg) {
  if (msg.other_hands[0][0] !== 0) return 'pass';
  const last = msg.last_bid;
  if (last[0] === 0 && last[1] === 0) return [1 + Math.floor(Math.random() * 6), 1];
  if (Math.random() < 0.35) return 'challenge';
  return [last[0], last[1] + 1];
}

function bot(name, onClose) {
  const socket = net.connect(port, '127.0.0.1');
  let buffer = '';
  socket.setEncoding('utf8');
  socket.on('connect', () => socket.write(JSON.stringify({name}) + '\n'));
  socket.on('data', (chunk) => {
    buffer += chunk;
    let nl;
    while ((nl = buffer.indexOf('\n')) >= 0) {
      const msg = JSON.parse(buffer.slice(0, nl));
      buffer = buffer.slice(nl + 1);
      if (msg.subject === 'move_request') {
        stats.requests += 1;
        socket.write(JSON.stringify({message_id: msg.message_id, move: decide(msg)}) + '\n');
      } else {
        stats.round_overs += 1;
      }
    }
  });
  socket.on('close', onClose);
  socket.on('error', () => {});
}

function pair(p, left) {
  if (!left) return;
  running += 1;
  let open = 2;
  const closed = () => {
    open -= 1;
    if (open) return;
    stats.matches += 1;
    running -= 1;
    if (left > 1) pair(p, left - 1);
    else if (!running) {
      stats.seconds = Number(process.hrtime.bigint() - started) / 1e9;
      console.log(JSON.stringify(stats));
    }
  };
  bot(`node${p}-a`, closed);
  bot(`node${p}-b`, closed);
}

for (let p = 0; p < pairs; p++) pair(p, matches);
