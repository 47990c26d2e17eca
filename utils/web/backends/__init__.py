"""Search backends: each turns a query into ``SearchResult``s or raises ``BackendError``.

``utils.web.search.SearchClient`` owns the fallback chain, the cache and rate-limit cool-downs;
a backend only talks to its service. "Backend" names a search provider; "engine" is reserved for
the LLM engine.
"""
