const u = new URL('https://user:pw@Example.COM:443/a/./b/../c%20d?x=1&y=two+words#frag');
console.log(u.href, u.origin, u.protocol, u.username, u.password, u.host, u.hostname, JSON.stringify(u.port), u.pathname, u.search, u.hash);
console.log(u.searchParams.get('y'), u.searchParams.get('x'), u.searchParams.has('z'), [...u.searchParams.keys()]);
u.searchParams.append('z', 'a b&c'); u.searchParams.set('x', '9'); u.pathname = '/new path'; u.hash = '';
console.log(u.toString(), JSON.stringify({ u }));
console.log(new URL('../up?q', 'http://h.com/a/b/c').href, new URL('/root', 'http://h.com/a/b').href, new URL('//other.org/p', 'https://h.com/x').href, new URL('?only', 'http://h.com/a/b?old').href, new URL('#h', 'http://h.com/a?q').href);
console.log(new URL('http://h.com').pathname, new URL('HTTP://H.com:80/').href, new URL('file:///tmp/x y.txt').href, new URL('mailto:a@b.c').pathname, new URL('http://h.com/ü?ä=ö').href);
for (const bad of ['not a url', 'http://', '//x']) { try { new URL(bad); console.log('parsed', bad); } catch (e) { console.log(e.code, e.name); } }
console.log(URL.canParse('https://x.y'), URL.canParse('nope'));
const p = new URLSearchParams({ a: '1', b: 'x y' }); p.append('a', '2'); p.sort();
console.log(p.toString(), p.getAll('a'), p.size, [...new URLSearchParams('q=%E2%9C%93&e=&f')], new URLSearchParams([['k', 'v']]).toString());
const url = require('url');
const legacy = url.parse('http://a.com:8080/p/a/t/h?query=string#hash', true);
console.log(legacy.host, legacy.port, legacy.pathname, JSON.stringify(legacy.query), legacy.hash, legacy.path);
console.log(url.resolve('http://a.com/b/c', 'd'), url.resolve('/one/two/three', 'four'), url.fileURLToPath('file:///tmp/a%20b'), url.pathToFileURL('/tmp/a b').href);
console.log(url.format({ protocol: 'https:', hostname: 'x.com', pathname: '/p', query: { a: 1 } }));
