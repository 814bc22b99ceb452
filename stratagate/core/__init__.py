"""The functional core: pure rules with no I/O (layers, decay, weights, search text, BM25 and
RRF, the evidence gate, element facts, provenance, turn validation)."""
