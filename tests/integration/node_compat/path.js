const path = require('path');
console.log(path.join('/a/b', '../c', './d.txt'), path.join('a', '', 'b/'), path.join(), path.join('..', 'x'));
console.log(path.resolve('/x', 'y', '../z'), path.resolve('/'), path.resolve('/a/b/'));
console.log(path.normalize('/a//b/../c/.'), path.normalize('./'), path.normalize(''), path.normalize('a/../..'));
console.log(path.dirname('/a/b/c.txt'), path.dirname('/a/b/'), path.dirname('c.txt'), path.dirname('/'), path.dirname('/a'));
console.log(path.basename('/a/b/c.txt'), path.basename('/a/b/c.txt', '.txt'), path.basename('/a/b/'), path.basename('/'), path.basename('x.js', 'x.js'));
console.log(path.extname('a.b.c'), path.extname('.bashrc'), path.extname('a.'), path.extname('a'), path.extname('..'));
console.log(path.relative('/data/a/b', '/data/c/d'), path.relative('/a', '/a'), path.relative('/a/b', '/a/b/c/d'));
console.log(JSON.stringify(path.parse('/home/u/file.tar.gz')), JSON.stringify(path.parse('file')), JSON.stringify(path.parse('/x')));
console.log(path.format({ dir: '/home/u', base: 'f.txt' }), path.format({ root: '/', name: 'f', ext: '.md' }), path.isAbsolute('/a'), path.isAbsolute('a'), path.sep, path.delimiter, path.posix === path);
try { path.join('a', 1); } catch (e) { console.log(e.code); }
