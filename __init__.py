"""Sleuth, a research agent for the terminal: the installed package (`sleuth`, `python -m sleuth`).

In a checkout this folder is the package root (see utils/checkout.py); main.py is the entry point.
"""

__version__ = "0.2.0"
