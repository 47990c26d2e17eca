"""URL rules with one owner: the canonical form used for de-duplication and "already visited"."""

from __future__ import annotations

import re
from urllib.parse import parse_qsl, unquote, urlencode, urlsplit, urlunsplit

# Query parameters that only track the visitor; dropped by normalize_url.
TRACKING_PARAMS = frozenset(
    {
        "gclid",
        "gclsrc",
        "dclid",
        "gbraid",
        "wbraid",
        "fbclid",
        "mc_cid",
        "mc_eid",
        "ref",
        "ref_src",
        "ref_url",
        "igshid",
        "igsh",
        "yclid",
        "msclkid",
        "_hsenc",
        "_hsmi",
        "__hstc",
        "__hssc",
        "__hsfp",
        "hsctatracking",
        "mkt_tok",
        "oly_anon_id",
        "oly_enc_id",
        "vero_id",
        "vero_conv",
        "_openstat",
        "wickedid",
        "twclid",
        "ttclid",
        "srsltid",
        "si",
        "spm",
        "scid",
        "s_cid",
        "cmpid",
        "trk",
        "trkcampaign",
        "sc_campaign",
        "sc_channel",
        "sc_content",
        "sc_medium",
        "sc_outcome",
        "sc_geo",
        "sc_country",
        "_ga",
        "_gl",
    }
)
TRACKING_PREFIXES = ("utm_", "pk_", "mtm_", "piwik_", "matomo_", "hsa_", "stm_")
_DEFAULT_PORTS = {"http": 80, "https": 443}


def normalize_url(url: str) -> str:
    """Canonical form of a URL for de-duplication and "already visited" checks.

    Lower-cases scheme and host, drops ``www.``, the default port, the fragment, a trailing
    slash (the root keeps ``/``) and tracking parameters, and sorts the remaining query
    parameters. Never raises: anything that does not parse as ``scheme://host...`` is returned
    stripped but otherwise unchanged.
    """
    try:
        s = str(url or "").strip()
    except Exception:  # noqa: BLE001 - a __str__ that raises
        return ""
    try:
        parts = urlsplit(s)
        scheme = parts.scheme.lower()
        if not scheme or not parts.netloc:
            return s
        host = (parts.hostname or "").rstrip(".")
        if not host:
            return s
        if host.startswith("www."):
            host = host[4:]
        if ":" in host:  # IPv6 literal
            host = f"[{host}]"
        try:
            port = parts.port
        except ValueError:
            port = None
        netloc = host
        if port is not None and port != _DEFAULT_PORTS.get(scheme):
            netloc = f"{host}:{port}"
        userinfo = parts.netloc.rpartition("@")[0] if "@" in parts.netloc else ""
        if userinfo:
            netloc = f"{userinfo}@{netloc}"
        path = re.sub(r"/{2,}", "/", parts.path) or "/"
        if len(path) > 1:
            path = path.rstrip("/") or "/"
        pairs = [
            (k, v)
            for k, v in parse_qsl(parts.query, keep_blank_values=True)
            if k.lower() not in TRACKING_PARAMS and not k.lower().startswith(TRACKING_PREFIXES)
        ]
        query = urlencode(sorted(pairs))
        return urlunsplit((scheme, netloc, path, query, ""))
    except Exception:  # noqa: BLE001 - junk in, junk out, never an exception
        return s


def path_words(path: str) -> str:
    """The words an address's path spells: "/wiki/Hot_Springs_(band).html" -> " wiki Hot Springs (band)"
    (a page's extension, and the short hash a saved copy adds before it, dropped)."""
    path = re.sub(r"_[0-9a-f]{6}\.html?$|\.html?$", "", unquote(path))
    return re.sub(r"[_/\-.]+", " ", path)


def link_title(url: str) -> str:
    """The title a page's address spells in its last part ("/wiki/Hot_Springs" -> "Hot Springs")."""
    return path_words(urlsplit(url).path.rstrip("/").rsplit("/", 1)[-1]).strip()
