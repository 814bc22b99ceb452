"""Deterministic heuristics that do the models' work with no model and no network.

``offline_summarizer``, ``offline_extractor`` and ``offline_element_projector`` are ready-made
callbacks (picklable instances); the classes take their bounds as constructor arguments.
"""

from __future__ import annotations

from stratagate.offline.element_projector import OfflineElementProjector
from stratagate.offline.event_extractor import OfflineExtractor
from stratagate.offline.summarizer import OfflineSummarizer

offline_summarizer = OfflineSummarizer()
offline_extractor = OfflineExtractor()
offline_element_projector = OfflineElementProjector()

__all__ = [
    "OfflineElementProjector",
    "OfflineExtractor",
    "OfflineSummarizer",
    "offline_element_projector",
    "offline_extractor",
    "offline_summarizer",
]
