"""An S3 emulator for the object-store tests: moto's server (from PyPI), started on a free port
of this machine, and the environment that points the engine, delta-rs and boto3 at it."""

import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import boto3

from emulator_process import free_port, stop_process

MOTO_SERVER = str(Path(sys.executable).parent / "moto_server")
CREDENTIALS = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing-secret",
               "AWS_REGION": "us-east-1"}


class S3Emulator:
    """Places are buckets, reached as s3://bucket/path.

    With `authenticating`, the server checks every request's signature against the keys of
    its IAM: a user with an allow-all policy is made first, and its keys are the emulator's."""

    def __init__(self, authenticating=False):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        # Its request log goes to a file: a pipe nobody reads would fill and stall the server.
        self.log = tempfile.TemporaryFile()
        env = dict(os.environ)
        if authenticating:
            # The first requests, which make the user, its keys and its policy, go unchecked.
            env["INITIAL_NO_AUTH_ACTION_COUNT"] = "3"
        self.process = subprocess.Popen([MOTO_SERVER, "-H", "127.0.0.1", "-p", str(self.port)],
                                        stdout=self.log, stderr=subprocess.STDOUT, env=env)
        deadline = time.monotonic() + 30
        while True:
            try:
                urllib.request.urlopen(self.url + "/moto-api/", timeout=1)
                break
            except OSError:
                if self.process.poll() is not None or time.monotonic() > deadline:
                    self.log.seek(0)
                    raise RuntimeError("moto_server did not start: " + self.log.read().decode())
                time.sleep(0.1)
        self.credentials = dict(CREDENTIALS)
        if authenticating:
            iam = boto3.client("iam", endpoint_url=self.url, region_name=CREDENTIALS["AWS_REGION"],
                               aws_access_key_id="unchecked", aws_secret_access_key="unchecked")
            iam.create_user(UserName="lake-writer")
            key = iam.create_access_key(UserName="lake-writer")["AccessKey"]
            iam.put_user_policy(UserName="lake-writer", PolicyName="all", PolicyDocument=json.dumps(
                {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "*", "Resource": "*"}]}))
            self.credentials.update(AWS_ACCESS_KEY_ID=key["AccessKeyId"],
                                    AWS_SECRET_ACCESS_KEY=key["SecretAccessKey"])

    name = "s3"

    def env(self, **extra):
        """The environment of an engine process: this machine's, without any other AWS
        settings, with the emulator's address and credentials."""
        env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
        env.update(self.credentials, AWS_ENDPOINT_URL=self.url, AWS_EC2_METADATA_DISABLED="true")
        env.update(extra)
        return env

    def storage_options(self):
        """delta-rs's options for the emulator."""
        return {"AWS_ENDPOINT_URL": self.url, "AWS_ACCESS_KEY_ID": self.credentials["AWS_ACCESS_KEY_ID"],
                "AWS_SECRET_ACCESS_KEY": self.credentials["AWS_SECRET_ACCESS_KEY"],
                "AWS_REGION": CREDENTIALS["AWS_REGION"], "AWS_ALLOW_HTTP": "true"}

    def spark_conf(self):
        """Spark's settings for reading the emulator's tables as s3a://bucket/path."""
        return {"spark.hadoop.fs.s3a.endpoint": self.url,
                "spark.hadoop.fs.s3a.endpoint.region": CREDENTIALS["AWS_REGION"],
                "spark.hadoop.fs.s3a.path.style.access": "true",
                "spark.hadoop.fs.s3a.connection.ssl.enabled": "false",
                "spark.hadoop.fs.s3a.access.key": self.credentials["AWS_ACCESS_KEY_ID"],
                "spark.hadoop.fs.s3a.secret.key": self.credentials["AWS_SECRET_ACCESS_KEY"],
                "spark.hadoop.fs.s3a.aws.credentials.provider":
                    "org.apache.hadoop.fs.s3a.SimpleAWSCredentialsProvider"}

    def client(self):
        return boto3.client("s3", endpoint_url=self.url, region_name=CREDENTIALS["AWS_REGION"],
                            aws_access_key_id=self.credentials["AWS_ACCESS_KEY_ID"],
                            aws_secret_access_key=self.credentials["AWS_SECRET_ACCESS_KEY"])

    def create(self, place):
        self.client().create_bucket(Bucket=place)

    def uri(self, place):
        return f"s3://{place}"

    def keys(self, bucket, prefix=""):
        paginator = self.client().get_paginator("list_objects_v2")
        return [o["Key"] for page in paginator.paginate(Bucket=bucket, Prefix=prefix)
                for o in page.get("Contents", [])]

    def stop(self):
        stop_process(self.process)
        self.log.close()
