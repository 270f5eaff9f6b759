// Two Liar's Dice bots that parse one JSON object per `data` event, as many course bots do
// (wrong in general, but it works on the reference server).  They count the reads that held
// more than one message: each such read would break such a bot.  Usage: node ld_per_read.js
// PORT -> prints {"a": {"reads", "multi"}, "b": {...}} when the server closes both.
'use strict';
const net = require('net');
const port = Number(process.argv[2]);
const stats = {};
let closed = 0;
for (const name of ['a', 'b']) {
  const socket = net.connect(port, '127.0.0.1');
  stats[name] = {reads: 0, multi: 0};
  socket.on('connect', () => socket.write(JSON.stringify({name}) + '\n'));
  socket.on('data', (chunk) => {
    const lines = chunk.toString().split('\n').filter((line) => line);
    stats[name].reads += 1;
    if (lines.length > 1) stats[name].multi += 1;
    for (const line of lines) {  // (answered anyway, so the match goes on)
      const msg = JSON.parse(line);
      if (msg.subject !== 'move_request') continue;
      const onTurn = msg.other_hands[0][0] === 0;
      const move = !onTurn ? 'pass' : (msg.last_bid[1] === 0 ? [3, 1] : 'challenge');
      socket.write(JSON.stringify({message_id: msg.message_id, move}) + '\n');
    }
  });
  socket.on('close', () => { if (++closed === 2) console.log(JSON.stringify(stats)); });
}
