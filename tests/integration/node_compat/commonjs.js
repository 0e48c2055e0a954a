const fs = require('fs');
fs.mkdirSync('lib', { recursive: true });
fs.writeFileSync('lib/math.js', "exports.add = (a, b) => a + b;\nexports.name = __filename.split('/').pop();\nmodule.exports.dir = __dirname.split('/').pop();\n");
fs.writeFileSync('lib/index.js', "const m = require('./math');\nmodule.exports = { m, again: require('./math') === m, self: module.id.endsWith('index.js') };\n");
fs.writeFileSync('data.json', '{"answer": 42}');
const lib = require('./lib');
console.log(lib.m.add(2, 3), lib.m.name, lib.m.dir, lib.again, lib.self, require('./data.json').answer, require('./data').answer);
try { require('./missing'); } catch (e) { console.log(e.code); }
try { require('left-pad'); } catch (e) { console.log(e.code); }
function main() { console.log('main ran', require.main === module, typeof module.exports, __filename.endsWith('.js'), __dirname.length > 0); }
if (require.main === module) main();
module.exports = { main };
