"""An HTTP proxy for the proxy tests, as a company's forward proxy behaves: plain-HTTP requests
in absolute form are forwarded, CONNECT opens a tunnel (which TLS then crosses end to end), and
with a user and password every request without the right Proxy-Authorization gets 407. Each
request it lets through is recorded as (method, target, User-Agent), so that a test can see
whose requests took it: the engine's own (User-Agent: mssql-cdc) and those of Arrow's store
libraries."""

import base64
import select
import socket
import threading
import urllib.parse


class HttpProxyServer:
    def __init__(self, user=None, password=None):
        self.seen = []
        self.refused = 0
        self.expected = None
        if user is not None:
            self.expected = "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()
        self.listener = socket.socket()
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(64)
        self.port = self.listener.getsockname()[1]
        self.stopping = False
        threading.Thread(target=self._accept, daemon=True).start()

    def url(self, user=None, password=None):
        credentials = f"{user}:{password}@" if user is not None else ""
        return f"http://{credentials}127.0.0.1:{self.port}"

    def stop(self):
        self.stopping = True
        self.listener.close()

    def _accept(self):
        while not self.stopping:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(client,), daemon=True).start()

    def _serve(self, client):
        upstream = None
        try:
            head = b""
            while b"\r\n\r\n" not in head:
                chunk = client.recv(65536)
                if not chunk:
                    return
                head += chunk
            head, rest = head.split(b"\r\n\r\n", 1)
            lines = head.decode("latin-1").split("\r\n")
            method, target, version = lines[0].split(" ", 2)
            headers = {}
            for line in lines[1:]:
                name, _, value = line.partition(":")
                headers[name.strip().lower()] = value.strip()
            if self.expected is not None and headers.get("proxy-authorization") != self.expected:
                self.refused += 1
                client.sendall(b"HTTP/1.1 407 Proxy Authentication Required\r\n"
                               b"Proxy-Authenticate: Basic realm=\"test\"\r\nContent-Length: 0\r\n"
                               b"Connection: close\r\n\r\n")
                return
            self.seen.append((method, target, headers.get("user-agent", "")))
            if method == "CONNECT":
                host, port = target.rsplit(":", 1)
                upstream = socket.create_connection((host.strip("[]"), int(port)))
                client.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
            else:
                url = urllib.parse.urlsplit(target)
                upstream = socket.create_connection((url.hostname, url.port or 80))
                origin = (url.path or "/") + (f"?{url.query}" if url.query else "")
                kept = [line for line in lines[1:]
                        if not line.lower().startswith(("proxy-authorization:", "proxy-connection:"))]
                upstream.sendall("\r\n".join([f"{method} {origin} {version}", *kept]).encode("latin-1")
                                 + b"\r\n\r\n" + rest)
            self._pipe(client, upstream)
        except OSError:
            pass
        finally:
            client.close()
            if upstream is not None:
                upstream.close()

    @staticmethod
    def _pipe(a, b):
        """Carries bytes both ways until either side closes. A later request on a kept-alive
        connection goes to the same upstream, in whatever form the client wrote it."""
        sockets = [a, b]
        while True:
            readable, _, _ = select.select(sockets, [], [], 60)
            if not readable:
                return
            for source in readable:
                data = source.recv(65536)
                if not data:
                    return
                (b if source is a else a).sendall(data)
