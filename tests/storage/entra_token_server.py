"""A stand-in for the places Azure identities get their tokens, for the identity tests: the
tenant's token endpoint (a service principal's secret, or a workload's federated token as a
client assertion), the instance metadata service of a VM, and App Service's local identity
endpoint. Each checks what the real one checks of a request and answers with a token Azurite
takes (audience https://storage.azure.com, an Entra ID issuer, valid times; Azurite does not
check signatures). Every request is recorded with its User-Agent, so a test can tell the
engine's own fetches from those of Arrow's Azure library."""

import base64
import json
import ssl
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

TENANT = "3f1b2c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d"
CLIENT_ID = "0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d"
CLIENT_SECRET = "pa55-w0rd-of-the-service-principal"
FEDERATED_TOKEN = "eyJhbGciOiJSUzI1NiJ9.the-projected-service-account-token.c2ln"
IDENTITY_HEADER = "header-only-app-service-knows"


def _b64(value):
    return base64.urlsafe_b64encode(json.dumps(value).encode()).rstrip(b"=").decode()


def storage_token():
    now = int(time.time())
    claims = {"aud": "https://storage.azure.com", "iss": f"https://sts.windows.net/{TENANT}/",
              "iat": now - 60, "nbf": now - 60, "exp": now + 3600, "tid": TENANT, "oid": CLIENT_ID}
    return _b64({"alg": "RS256", "typ": "JWT"}) + "." + _b64(claims) + ".c2lnbmF0dXJl"


class EntraTokenServer:
    def __init__(self, cert, key):
        self.requests = []  # (kind, user agent)
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def answer(self, status, body):
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def refuse(self, status, error, description):
                self.answer(status, {"error": error, "error_description": description})

            def do_POST(self):
                form = urllib.parse.parse_qs(self.rfile.read(int(self.headers["Content-Length"])).decode())
                field = lambda name: form.get(name, [""])[0]  # noqa: E731
                if self.path != f"/{TENANT}/oauth2/v2.0/token":
                    return self.refuse(400, "invalid_request", "AADSTS90002: Tenant not found.")
                if (field("grant_type") != "client_credentials" or field("client_id") != CLIENT_ID
                        or field("scope") != "https://storage.azure.com/.default"):
                    return self.refuse(400, "invalid_request", "AADSTS900144: bad request.")
                if "client_secret" in form:
                    kind, good = "secret", field("client_secret") == CLIENT_SECRET
                else:
                    kind = "workload"
                    good = (field("client_assertion_type") ==
                            "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
                            and field("client_assertion") == FEDERATED_TOKEN)
                if not good:
                    return self.refuse(401, "invalid_client", "AADSTS7000215: Invalid client secret provided.")
                server.requests.append((kind, self.headers.get("User-Agent", "")))
                self.answer(200, {"token_type": "Bearer", "expires_in": 3599,
                                  "access_token": storage_token()})

            def do_GET(self):
                url = urllib.parse.urlsplit(self.path)
                query = urllib.parse.parse_qs(url.query)
                if query.get("resource") not in (["https://storage.azure.com"], ["https://storage.azure.com/"]):
                    return self.refuse(400, "invalid_resource", "unknown resource")
                expires_on = str(int(time.time()) + 3600)
                if url.path == "/metadata/identity/oauth2/token":
                    if self.headers.get("Metadata") != "true":
                        return self.refuse(400, "invalid_request", "Required metadata header not specified")
                    server.requests.append(("imds", self.headers.get("User-Agent", "")))
                    return self.answer(200, {"access_token": storage_token(), "expires_in": "3599",
                                             "expires_on": expires_on, "token_type": "Bearer",
                                             "resource": "https://storage.azure.com"})
                if url.path == "/msi/token":
                    if self.headers.get("X-IDENTITY-HEADER") != IDENTITY_HEADER:
                        return self.refuse(401, "unauthorized", "X-IDENTITY-HEADER is missing or wrong")
                    server.requests.append(("app-service", self.headers.get("User-Agent", "")))
                    return self.answer(200, {"access_token": storage_token(), "expires_on": expires_on,
                                             "token_type": "Bearer", "resource": "https://storage.azure.com"})
                self.refuse(404, "not_found", self.path)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(str(cert), str(key))
        self.server.socket = context.wrap_socket(self.server.socket, server_side=True)
        self.url = f"https://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def stop(self):
        self.server.shutdown()
        self.server.server_close()
