// fs's callback API, its streams, readline over a file and the file-descriptor calls, each step after the
// last one's callback (so the order is Node's whatever its I/O timing).
const fs = require('fs');
const readline = require('readline');
const steps = [
  (next) => fs.writeFile('a.txt', 'first line\nsecond line\nthird\n', (err) => { console.log('written', err); next(); }),
  (next) => fs.readFile('a.txt', 'utf8', (err, data) => { console.log('read', err, JSON.stringify(data)); next(); }),
  (next) => fs.readFile('a.txt', (err, data) => { console.log('bytes', Buffer.isBuffer(data), data.length); next(); }),
  (next) => fs.stat('a.txt', (err, st) => { console.log('stat', err, st.size, st.isFile(), st.isDirectory()); next(); }),
  (next) => fs.readFile('missing.txt', 'utf8', (err, data) => { console.log('missing', err.code, data); next(); }),
  (next) => fs.exists('a.txt', (there) => { console.log('exists', there); next(); }),
  (next) => fs.appendFile('a.txt', 'fourth\n', (err) => { console.log('appended', err); next(); }),
  (next) => fs.mkdir('sub/dir', { recursive: true }, (err) => { console.log('mkdir', err); next(); }),
  (next) => fs.readdir('.', (err, names) => { console.log('readdir', names.filter((n) => n.length === 5 || n === 'sub').sort()); next(); }),
  (next) => {
    const lines = [];
    readline.createInterface({ input: fs.createReadStream('a.txt'), crlfDelay: Infinity })
      .on('line', (line) => lines.push(line)).on('close', () => { console.log('lines', lines); next(); });
  },
  async (next) => {
    for await (const line of readline.createInterface({ input: fs.createReadStream('a.txt') })) console.log('for await', line);
    next();
  },
  (next) => {
    const out = fs.createWriteStream('b.txt');
    out.write('x=1\n');
    out.write(Buffer.from('y=2\n'));
    out.end('z=3\n', () => { console.log('b.txt', JSON.stringify(fs.readFileSync('b.txt', 'utf8')), out.bytesWritten); next(); });
  },
  (next) => {
    const chunks = [];
    fs.createReadStream('b.txt', { encoding: 'utf8' }).on('data', (c) => chunks.push(c)).on('end', () => { console.log('chunks', chunks); next(); });
  },
  (next) => fs.createReadStream('b.txt').pipe(fs.createWriteStream('c.txt')).on('finish', () => { console.log('piped', fs.readFileSync('c.txt', 'utf8')); next(); }),
  (next) => {
    const events = [];
    fs.createReadStream('nope.txt').on('data', () => events.push('data')).on('end', () => events.push('end'))
      .on('error', (e) => events.push('error ' + e.code)).on('close', () => { console.log('missing file', events); next(); });
  },
  (next) => {
    const fd = fs.openSync('d.txt', 'w');
    fs.writeSync(fd, 'via fd\n');
    fs.closeSync(fd);
    const rfd = fs.openSync('d.txt', 'r'), buf = Buffer.alloc(3);
    console.log('readSync', fs.readSync(rfd, buf, 0, 3, null), buf.toString(), fs.fstatSync(rfd).size);
    fs.closeSync(rfd);
    fs.writeSync(1, 'to stdout through fd 1\n');
    console.log(fs.constants.F_OK, fs.constants.R_OK, fs.realpathSync('a.txt') === process.cwd() + '/a.txt', fs.mkdtempSync('tmp-').length);
    fs.accessSync('a.txt');
    try { fs.accessSync('nope'); } catch (e) { console.log('access', e.code); }
    next();
  },
  (next) => fs.promises.readFile('a.txt', 'utf8').then((t) => { console.log('promises', t.split('\n').length); next(); }),
  (next) => fs.unlink('d.txt', (err) => { console.log('unlink', err, fs.existsSync('d.txt')); next(); }),
];
const run = (i) => { if (i < steps.length) steps[i](() => run(i + 1)); else console.log('done'); };
// Every name fs shows has a value (Node's own lchmod is undefined off macOS).
console.log('names without a value', Object.keys(fs).filter((k) => fs[k] === undefined && !k.startsWith('lchmod')));
run(0);
