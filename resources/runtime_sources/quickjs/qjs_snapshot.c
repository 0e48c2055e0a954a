/*
 * QuickJS-NG (quickjs.c from the PyPI quickjs-ng sdist, unchanged) with one
 * addition the driver needs for snapshot runs: a fresh Math.random state.
 *
 * Why: a snapshot run (driver.c, "Snapshot runs") starts from a copy of a
 * context created once, at capture; JS_NewContext seeded Math.random from
 * the clock then, so without this every run would draw the same sequence.
 * The state lives in the private JSContext struct, hence this translation
 * unit (compiled instead of quickjs.c; packaging: backends/wasm/recipes.py).
 */
#include "quickjs.c"

void qjs_reseed_random(JSContext *c, uint64_t seed)
{
    /* xorshift64* needs a non-zero state */
    c->random_state = seed ? seed : 1;
}
