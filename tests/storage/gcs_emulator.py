"""A Google Cloud Storage emulator for the object-store tests: fake-gcs-server (built from the
Go module proxy by scripts/setup_fake_gcs.sh), started on a free port of this machine with its
objects in memory, and the environment that points the engine and delta-rs at it.

Places are buckets; the engine reaches them as gs://bucket/path through STORAGE_EMULATOR_HOST,
the way Google's own client libraries are pointed at an emulator."""

import http.client
import json
import os
import subprocess
import tempfile
import time
import urllib.parse
from pathlib import Path

from emulator_process import free_port, stop_process

ROOT = Path(__file__).resolve().parents[2]


def fake_gcs_server():
    return subprocess.run([str(ROOT / "scripts" / "setup_fake_gcs.sh")], check=True,
                          capture_output=True, text=True).stdout.strip()


class GcsEmulator:
    name = "gcs"

    def __init__(self):
        self.port = free_port()
        self.log = tempfile.TemporaryFile()
        # -public-host must be the Host its clients send, or it answers their XML reads 404.
        self.process = subprocess.Popen(
            [fake_gcs_server(), "-scheme", "http", "-host", "127.0.0.1", "-port", str(self.port),
             "-backend", "memory", "-public-host", f"127.0.0.1:{self.port}"],
            stdout=self.log, stderr=subprocess.STDOUT)
        self.url = f"http://127.0.0.1:{self.port}"
        deadline = time.monotonic() + 30
        while True:
            try:
                if self.request("GET", "/_internal/healthcheck")[0] == 200:
                    break
            except OSError:
                pass
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.log.seek(0)
                raise RuntimeError("fake-gcs-server did not start: " + self.log.read().decode())
            time.sleep(0.1)

    def request(self, method, target, body=b""):
        """One JSON API request; returns (status, body)."""
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        connection.request(method, target, body=body)
        response = connection.getresponse()
        data = response.read()
        connection.close()
        return response.status, data

    def env(self, **extra):
        """The environment of an engine process: this machine's, without any other Google
        settings, with the emulator's address."""
        env = {k: v for k, v in os.environ.items()
               if k not in ("STORAGE_EMULATOR_HOST", "CLOUD_STORAGE_EMULATOR_ENDPOINT",
                            "GOOGLE_APPLICATION_CREDENTIALS", "GCE_METADATA_HOST")}
        env["STORAGE_EMULATOR_HOST"] = self.url
        env.update(extra)
        return env

    def storage_options(self):
        """delta-rs's options for the emulator: its base URL, and no OAuth."""
        return {"google_service_account_key": json.dumps(
            {"gcs_base_url": self.url, "disable_oauth": True, "client_email": "", "private_key": "",
             "private_key_id": ""})}

    def create(self, place):
        status, body = self.request("POST", "/storage/v1/b?project=test", json.dumps({"name": place}).encode())
        assert status == 200, body

    def uri(self, place):
        return f"gs://{place}"

    def keys(self, place, prefix=""):
        names, token = [], ""
        while True:
            query = urllib.parse.urlencode({"prefix": prefix, "pageToken": token})
            status, body = self.request("GET", f"/storage/v1/b/{place}/o?{query}")
            assert status == 200, body
            page = json.loads(body)
            names += [item["name"] for item in page.get("items", [])]
            token = page.get("nextPageToken", "")
            if not token:
                return sorted(names)

    def stop(self):
        stop_process(self.process)
        self.log.close()
