"""Loaded by CLI subprocesses started from the tests (PYTHONPATH): installs the network guard and
logs every violation to $SLEUTH_NETGUARD_LOG, which the test then checks is absent."""

import os

import netguard


def _log(message: str) -> None:
    path = os.environ.get("SLEUTH_NETGUARD_LOG")
    if path:
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(message + "\n")


netguard.install(_log)
