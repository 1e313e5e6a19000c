"""An Azure Blob emulator for the object-store tests: Azurite (from npm, installed by
scripts/setup_azurite.sh), started on a free port of this machine with its data in a temporary
folder, and the environment that points the engine and delta-rs at it.

Places are containers; the engine reaches them as az://container/path through
AZURE_STORAGE_CONNECTION_STRING, the way Azure's own tools are pointed at Azurite.

With `tls` (authority, certificate and key, as tls_certificate() makes them), Azurite serves https and
also takes Entra ID bearer tokens (its "--oauth basic": a token's audience, issuer and times
are checked, not its signature); processes then trust the certificate through
SSL_CERT_FILE."""

import base64
import hashlib
import hmac
import http.client
import os
import ssl
import subprocess
import tempfile
import time
import urllib.parse
from email.utils import formatdate
from pathlib import Path

import pyarrow.fs as pafs

from emulator_process import free_port, stop_process

ROOT = Path(__file__).resolve().parents[2]
ACCOUNT = "devstoreaccount1"
# Azurite's documented development key.
KEY = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="


def azurite_main():
    folder = subprocess.run([str(ROOT / "scripts" / "setup_azurite.sh")], check=True,
                            capture_output=True, text=True).stdout.strip()
    return str(Path(folder) / "node_modules" / "azurite" / "dist" / "src" / "blob" / "main.js")


def tls_certificate(folder):
    """A certificate for 127.0.0.1 and its key, issued by a certificate authority of its own
    (clients such as rustls refuse a self-signed certificate that serves as its own CA), all
    written into `folder`: (authority, certificate, key)."""
    folder = Path(folder)
    authority, authority_key = folder / "ca.pem", folder / "ca-key.pem"
    cert, key, request = folder / "cert.pem", folder / "key.pem", folder / "cert.csr"
    extensions = folder / "cert.ext"
    extensions.write_text("basicConstraints=CA:FALSE\nsubjectAltName=IP:127.0.0.1\n")
    for command in (
            ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", authority_key, "-out", authority,
             "-days", "2", "-subj", "/CN=mssql-cdc test authority"],
            ["req", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", request, "-subj", "/CN=127.0.0.1"],
            ["x509", "-req", "-in", request, "-CA", authority, "-CAkey", authority_key, "-CAcreateserial",
             "-out", cert, "-days", "2", "-extfile", extensions]):
        subprocess.run(["openssl", *map(str, command)], check=True, capture_output=True)
    return authority, cert, key


class AzureEmulator:
    name = "azure"

    def __init__(self, tls=None):
        self.port = free_port()
        self.data = tempfile.TemporaryDirectory()
        self.log = tempfile.TemporaryFile()
        self.tls = tls
        secure = ["--oauth", "basic", "--cert", str(tls[1]), "--key", str(tls[2])] if tls else []
        # Arrow sends a newer x-ms-version than Azurite 3.35 knows; the emulator's check of it
        # is switched off, as Arrow's own tests do.
        self.process = subprocess.Popen(
            ["node", azurite_main(), "--blobHost", "127.0.0.1", "--blobPort", str(self.port),
             "--location", self.data.name, "--silent", "--skipApiVersionCheck", "--loose",
             "--disableTelemetry", *secure], stdout=self.log, stderr=subprocess.STDOUT)
        self.scheme = "https" if tls else "http"
        self.endpoint = f"{self.scheme}://127.0.0.1:{self.port}/{ACCOUNT}"
        deadline = time.monotonic() + 60
        while True:
            try:
                http.client.HTTPConnection("127.0.0.1", self.port, timeout=1).connect()
                break
            except OSError:
                if self.process.poll() is not None or time.monotonic() > deadline:
                    self.log.seek(0)
                    raise RuntimeError("Azurite did not start: " + self.log.read().decode())
                time.sleep(0.1)
        authority = f"127.0.0.1:{self.port}"
        self.fs = pafs.AzureFileSystem(account_name=ACCOUNT, account_key=KEY,
                                       blob_storage_authority=authority, dfs_storage_authority=authority,
                                       blob_storage_scheme=self.scheme, dfs_storage_scheme=self.scheme)

    def connection_string(self, key=KEY):
        return (f"DefaultEndpointsProtocol={self.scheme};AccountName={ACCOUNT};AccountKey={key};"
                f"BlobEndpoint={self.endpoint};")

    def env(self, **extra):
        """The environment of an engine process: this machine's, without any other Azure
        settings, with the emulator's connection string."""
        env = {k: v for k, v in os.environ.items() if not k.startswith("AZURE_")}
        env["AZURE_STORAGE_CONNECTION_STRING"] = self.connection_string()
        if self.tls:
            env["SSL_CERT_FILE"] = str(self.tls[0])
        env.update(extra)
        return env

    def storage_options(self):
        """delta-rs's options for the emulator."""
        return {"account_name": ACCOUNT, "account_key": KEY, "endpoint": self.endpoint,
                "allow_http": "true"}

    def spark_conf(self):
        """Spark's settings for reading the emulator's tables through ABFS (hadoop-azure 3.5.0)
        as abfs://container@devstoreaccount1.dfs.core.windows.net/path: the Blob endpoint over
        plain HTTP, which the default HTTP library of ABFS cannot do."""
        return {"spark.hadoop.fs.azure.abfs.endpoint": f"127.0.0.1:{self.port}",
                "spark.hadoop.fs.azure.always.use.https": "false",
                f"spark.hadoop.fs.azure.account.key.{ACCOUNT}.dfs.core.windows.net": KEY,
                "spark.hadoop.fs.azure.account.hns.enabled": "false",
                "spark.hadoop.fs.azure.fns.account.service.type": "BLOB",
                "spark.hadoop.fs.azure.networking.library": "JDK_HTTP_URL_CONNECTION"}

    def create(self, place):
        self.fs.create_dir(place)

    def uri(self, place):
        return f"az://{place}"

    def keys(self, place, prefix=""):
        selector = pafs.FileSelector(f"{place}/{prefix}".rstrip("/"), recursive=True,
                                     allow_not_found=True)
        return sorted(info.path[len(place) + 1:] for info in self.fs.get_file_info(selector)
                      if info.type == pafs.FileType.File)

    def request(self, method, path, body=b"", headers=None, key=KEY):
        """One Shared Key signed Blob request to `path` ("container/blob"), for what the tests
        check of the emulator itself; returns (status, x-ms-error-code)."""
        target = urllib.parse.quote(f"/{ACCOUNT}/{path}", safe="/-_.~")
        headers = {"x-ms-version": "2021-10-04", "x-ms-date": formatdate(time.time(), usegmt=True),
                   **(headers or {})}
        if method == "PUT":
            headers["Content-Length"] = str(len(body))
        lower = {k.lower(): v for k, v in headers.items()}
        standard = ["content-encoding", "content-language", "content-length", "content-md5",
                    "content-type", "date", "if-modified-since", "if-match", "if-none-match",
                    "if-unmodified-since", "range"]
        lines = [method] + ["" if (n == "content-length" and lower.get(n) == "0") else lower.get(n, "")
                            for n in standard]
        ms = "".join(f"{k}:{v}\n" for k, v in sorted(lower.items()) if k.startswith("x-ms-"))
        to_sign = "\n".join(lines) + "\n" + ms + f"/{ACCOUNT}{target}"
        signature = base64.b64encode(hmac.new(base64.b64decode(key), to_sign.encode(),
                                              hashlib.sha256).digest()).decode()
        headers["Authorization"] = f"SharedKey {ACCOUNT}:{signature}"
        if self.tls:
            context = ssl.create_default_context(cafile=str(self.tls[0]))
            connection = http.client.HTTPSConnection("127.0.0.1", self.port, timeout=30, context=context)
        else:
            connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        connection.request(method, target, body=body, headers=headers)
        response = connection.getresponse()
        response.read()
        connection.close()
        return response.status, response.getheader("x-ms-error-code")

    def stop(self):
        stop_process(self.process)
        self.log.close()
        self.data.cleanup()
