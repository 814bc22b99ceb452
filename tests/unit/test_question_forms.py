"""Question and message forms that raw search ranks by (``stratagate.core.question_forms``)."""

from __future__ import annotations

import pytest

from stratagate.core.question_forms import is_hypothetical_question, message_forms, names_thing


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("Would Caroline be considered religious?", True),
        ("What might John's degree be in?", True),
        ("Is it likely that Nate has friends?", True),
        ("Could Jon probably open a studio?", True),
        ("What did Caroline research?", False),
        ("When did Melanie go camping?", False),
        ("Wouldn't it be nice?", False),  # a contraction is not the word
    ],
)
def test_hypothetical_questions_ask_for_an_inference(question: str, expected: bool) -> None:
    assert is_hypothetical_question(question) is expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("I'm a big fan of pottery", True),
        ("I\u2019m keen on counseling", True),  # a typographic apostrophe
        ("I am grateful for my church", True),
        ("I really love hiking", True),
        ("My kids love the beach", True),
        ("That sounds great, Caroline!", False),
        ("Mystery novels are fun", False),  # "my" only as a word
    ],
)
def test_self_descriptions_are_first_person_statements(text: str, expected: bool) -> None:
    assert message_forms(text).self_description is expected


def test_the_asking_share_counts_the_words_of_questions() -> None:
    assert message_forms("Do you paint? What do you paint?").asking_share == 1.0
    assert message_forms("I went hiking. Did you?").asking_share == pytest.approx(2 / 5)
    assert message_forms("No question here").asking_share == 0.0
    assert message_forms("Really?").asking_share == 1.0
    assert message_forms("").asking_share == 0.0


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Last week I went to a pride parade", True),
        ("I just joined a gym!", True),
        ("Yesterday was wild", True),
        ("I painted a horse recently", True),
        ("Painting is so relaxing", False),
        ("Wow, that's amazing!", False),
    ],
)
def test_reports_tell_what_the_speaker_did(text: str, expected: bool) -> None:
    assert message_forms(text).report is expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Your recipe looks great, you must share it!", True),
        ("I'm keen to try your recipe", False),  # one each: not more of the listener
        ("I made my first pie", False),
        ("Lovely weather", False),
    ],
)
def test_messages_about_the_listener_say_you_more_than_i(text: str, expected: bool) -> None:
    assert message_forms(text).about_listener is expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("We went to see Hamilton last week", True),  # a title
        ("My dog Max loves the park", True),  # a name
        ("It took 3 years to finish", True),  # a number
        ('I read "Charlotte\'s Web" again', True),
        ("Painting is so relaxing, I think", False),  # topic talk
        ("I love it. I'm glad I did", False),  # "I" is no name
        ("Thanks Mel! That is so kind", False),  # a greeted person
        ("Hey Jon, how are you?", False),
        ("That sounds lovely, Caroline.", False),  # a speaker's name, given as people
        ("Interviews start next Monday, in May", False),  # days and months say when
    ],
)
def test_a_message_names_a_thing_by_a_name_inside_a_sentence_or_a_number(
    text: str, expected: bool
) -> None:
    assert names_thing(text, frozenset({"caroline", "melanie"})) is expected
    assert message_forms(text, frozenset({"caroline"})).names_thing is expected
