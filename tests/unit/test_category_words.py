"""The category lexicon: category words of a query name their members as search tokens."""

from __future__ import annotations

from stratagate.core.category_words import category_members, named_element_types
from stratagate.core.search_text import query_tokens


def test_a_category_word_names_its_members_as_stems() -> None:
    members = category_members(query_tokens("What activities does Melanie partake in?"))
    assert {"swim", "paint", "hik", "camp"} <= set(members)
    assert len(members) == len(set(members))


def test_no_category_word_no_members() -> None:
    assert category_members(query_tokens("When did Melanie paint a sunset?")) == []


def test_members_already_in_the_query_are_not_repeated() -> None:
    tokens = query_tokens("Which pets, a dog or a cat?")
    members = category_members(tokens)
    assert "dog" not in members and "cat" not in members
    assert "turtl" in members


def test_a_word_naming_an_element_type_names_the_type() -> None:
    assert named_element_types(query_tokens("Which cities has Jon visited?")) == ["place"]
    assert named_element_types(query_tokens("What activities does Jon like?")) == []
