// A loopback HTTP proxy that adds the server's bearer token to every
// request and passes everything else through unchanged (Host, Origin and
// all headers, the body, the streamed response): the conformance runner
// has no option for a credential, and the server requires one.
import http from 'node:http';

export function startProxy(target, token) {
  const t = new URL(target);
  const srv = http.createServer((req, res) => {
    const headers = { ...req.headers, authorization: `Bearer ${token}` };
    const up = http.request({ host: t.hostname, port: t.port, method: req.method, path: req.url, headers, setHost: false }, (ur) => {
      res.writeHead(ur.statusCode, ur.headers);
      ur.pipe(res);
    });
    up.on('error', (e) => { res.writeHead(502); res.end(String(e)); });
    res.on('close', () => { if (!res.writableEnded) up.destroy(); });
    req.pipe(up);
  });
  return new Promise((resolve) => srv.listen(0, '127.0.0.1', () => resolve({ port: srv.address().port, close: () => srv.close() })));
}
