// A tiny web app: run it with `playground serve --lang js web_counter.js`.
// One live QuickJS instance answers every request, so `hits` persists.
//   GET  /          a greeting and the hit count (JSON)
//   POST /echo      the request body and a header, echoed back
//   GET  /counter   an HTML page with the count
let hits = 0;

export default {
  async fetch(request) {
    hits++;
    console.log(`${request.method} ${request.path} (#${hits})`);
    if (request.path === "/echo" && request.method === "POST") {
      return Response.json({
        body: await request.text(),
        contentType: request.headers.get("content-type"),
      });
    }
    if (request.path === "/counter") {
      return new Response(`<!doctype html><h1>Hits: ${hits}</h1>`, {
        headers: { "content-type": "text/html; charset=utf-8" },
      });
    }
    if (request.path !== "/") {
      return new Response("not found\n", { status: 404 });
    }
    return Response.json({ hello: "from the sandbox", hits, query: request.query });
  },
};
