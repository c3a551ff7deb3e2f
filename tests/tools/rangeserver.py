#!/usr/bin/env python3
"""A loopback HTTP file server with Range support for the fetch tests.

  rangeserver.py DIR PORTFILE LOG [--cut N]

Files named norange-* ignore Range (answer 200 with the whole file).
GET /any/NAME?to=URL (URL percent-encoded) answers 302 to URL, with a body.
Serves DIR on 127.0.0.1 at a free port, written to PORTFILE. Each request
is logged to LOG as "GET PATH RANGE". With --cut N, the first full GET of
each file sends only N bytes of it and drops the connection (an interrupted
download), so the client has something to resume."""
import http.server
import os
import re
import sys
import urllib.parse

root, portfile, logfile = sys.argv[1], sys.argv[2], sys.argv[3]
cut = int(sys.argv[5]) if len(sys.argv) > 5 and sys.argv[4] == "--cut" else None
cut_done = set()


class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def do_GET(self):
        rng = self.headers.get("Range")
        with open(logfile, "a") as f:
            f.write("GET %s %s\n" % (self.path, rng or "-"))
        q = urllib.parse.urlsplit(self.path).query
        if q.startswith("to="):
            body = b"moved"
            self.send_response(302)
            self.send_header("Location", urllib.parse.unquote(q[3:]))
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        name = os.path.basename(self.path)
        p = os.path.join(root, name)
        if not name or not os.path.isfile(p):
            self.send_error(404)
            return
        data = open(p, "rb").read()
        start = 0
        if name.startswith("norange-"):
            rng = None
        if rng:
            m = re.match(r"bytes=(\d+)-$", rng)
            if not m or int(m.group(1)) >= len(data):
                self.send_response(416)
                self.send_header("Content-Range", "bytes */%d" % len(data))
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            start = int(m.group(1))
            self.send_response(206)
            self.send_header("Content-Range", "bytes %d-%d/%d" % (start, len(data) - 1, len(data)))
        else:
            self.send_response(200)
        self.send_header("Content-Length", str(len(data) - start))
        self.send_header("Accept-Ranges", "bytes")
        self.end_headers()
        if cut is not None and not rng and name not in cut_done:
            cut_done.add(name)
            self.wfile.write(data[:cut])
            self.wfile.flush()
            self.close_connection = True
            return
        self.wfile.write(data[start:])


srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
with open(portfile + ".tmp", "w") as f:
    f.write(str(srv.server_address[1]))
os.rename(portfile + ".tmp", portfile)
srv.serve_forever()
