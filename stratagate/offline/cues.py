"""Which memory signals a sentence carries: decisions, preferences, plans, changes, identity,
introductions of people and assignments of work.

Pure pattern rules shared by the offline summarizer and extractor. ``kinds`` lists what a
sentence says in priority order; ``tense`` reads the grammatical direction from markers
(time words excluded: the temporal resolver decides those).
"""

from __future__ import annotations

import re
from typing import Literal

Kind = Literal[
    "cancellation", "change", "decision", "plan", "assignment", "preference", "identity",
    "introduction", "activity", "milestone",
]  # fmt: skip
KIND_ORDER: tuple[Kind, ...] = (
    "cancellation", "change", "decision", "plan", "assignment", "preference", "identity",
    "introduction", "activity", "milestone",
)  # fmt: skip
"""Priority when one sentence carries several signals: the first one names the event."""

_I = r"(?:i|we)"
_CAP = r"[A-Z][a-z\u00df-\u00ff]+"
_ADVERB = (
    r"(?:(?:just|finally|recently|also|actually|already|officially|even|then|now|really|"
    r"totally|absolutely|still|truly|currently)\s+)*"
)

_MENTAL = (
    "wanted|loved|liked|needed|hoped|guessed|figured|realized|realised|used|seemed|looked|"
    "noticed|wondered|missed|enjoyed|appreciated|imagined|believed|decided|wished|remembered|"
    "considered|expected|supposed|agreed|worried|tired|bored|excited|interested|amazed|pleased"
)
_MENTAL_ING = (
    "thinking|feeling|hoping|wondering|going|gonna|trying|doing|looking|saying|talking|kidding|"
    "getting|loving|having|glad|planning|considering|curious|dying|missing|waiting|telling|"
    "asking|guessing|wishing|sorry|everything|something|nothing|anything"
)
_PATTERNS: dict[Kind, list[str]] = {
    "cancellation": [
        r"\b(?:cancel(?:l)?ed|called\s+off|scrapped|dropped\s+the\s+plan)\b",
        r"取消",
    ],
    "change": [
        r"\b(?:switched|moved|migrated|changed|converted|transitioned|upgraded|downgraded)\s+"
        r"(?:over\s+)?(?:from|to)\b",
        r"\bswitch(?:ed|ing)?\s+(?:over|back)\b",
        r"\breplaced\b.{1,40}?\bwith\b",
        r"\bno\s+longer\b",
        r"\bswitch(?:ing)?\s+to\b",
        r"\b(?:instead\s+of|rather\s+than)\b",
        r"(?-i:\bno\s+(?:more\s+|hosted\s+|managed\s+)?[A-Z][\w.]*\w)",
        r"\b(?:started|began)\s+using\b",
        r"\b(?:quit|stopped|gave\s+up)\s+(?:using\s+|my\s+|the\s+|\w+ing\b)",
        r"改用|换成|换到|转用|不再|搬到|改成|迁移到|迁到|换掉|不用[^，。！？]{1,16}了",
    ],
    "decision": [
        rf"\b{_I}\s+(?:have\s+|'ve\s+)?{_ADVERB}decided\b",
        r"\bdecided\s+to\b",
        r"\blet'?s\s+(?:use|go\s+with|switch|stick\s+with|adopt|pick|choose|do|keep|set\s+up)\b",
        r"\b(?:we'?ll|we\s+will)\s+(?:use|adopt|keep|stick\s+with)\b",
        r"^(?:tech\s+)?stack\s*[:：]",
        r"\b(?:we'?re|i'?m|we\s+are|i\s+am)\s+going\s+with\b",
        r"\b(?:we'?ll|i'?ll|we\s+will|i\s+will)\s+go\s+with\b",
        rf"\b{_I}\s+{_ADVERB}(?:chose|opted\s+(?:for|to)|settled\s+on|picked|committed\s+to)\b",
        r"决定|选择了|选用|采用|就用|确定用|定了",
    ],
    "plan": [
        r"\b(?:i'?m|i\s+am|we'?re|we\s+are)\s+(?:going|gonna)\s+(?:to\s+)?\w+",
        r"\b(?:i'?m|we'?re)\s+gonna\b",
        r"\b(?:planning|plan|plans|planned)\s+(?:to|on|for|a|an|my|our|the|some)\b",
        r"\b(?:i'?m|we'?re|i\s+am|we\s+are)\s+off\s+to\b",
        r"\b(?:i'?ll|we'?ll|i\s+will|we\s+will)\s+(?!(?:never|always|keep\s+(?:you|ya)\s+posted|"
        r"let\s+you\s+know|keep\s+that\s+in\s+mind|keep\s+it\s+in\s+mind|do\s+that|"
        r"try|think\s+about\s+it|check\s+it\s+out|see|be\s+(?:there|fine|ok|okay))\b)",
        r"\b(?:thinking|thinking\s+about|considering)\s+(?:about\s+|of\s+)?\w+ing\b",
        r"\b(?:hoping|hope|intend|intending|aim|aiming)\s+to\b",
        r"\blooking\s+forward\s+to\b",
        r"^plan(?:\s+for\b[^:：]{1,40})?\s*[:：]",
        r"\b(?:i'?m|we'?re)\s+(?:organizing|hosting|attending|heading|taking|starting)\b",
        r"打算|计划|准备|将要|要去|想去|目标是",
    ],
    "assignment": [
        r"\b(?:is|will\s+be)\s+in\s+charge\s+of\b",
        r"\bassigned\s+to\b",
        rf"(?-i:\b{_CAP})\s+will\s+(?:own|handle|lead|run|review|do\s+the)\b",
        r"交给|由.{1,10}负责|负责",
    ],
    "preference": [
        rf"\b{_I}\s+{_ADVERB}(?:prefer|love|adore|like|enjoy|hate|dislike|can'?t\s+stand)\s+"
        r"(?!(?:that|it|this|you|them|how|what|hearing|seeing|to\s+hear|the\s+way|your)\b)",
        r"\b(?:my|our)\s+(?:all-time\s+)?(?:favorite|favourite)\b",
        r"\b(?:i'?m|i\s+am)\s+(?:a\s+)?(?:big\s+|huge\s+)?fan\s+of\b",
        r"\b(?:i'?m|i\s+am)\s+(?:really\s+|so\s+)?(?:into|passionate\s+about)\b",
        r"\bi\s+(?:do\s+not|don'?t)\s+(?:like|enjoy)\b",
        r"\b(?:she|he|they)\s+(?:also\s+|really\s+)?(?:wants|prefers)\b",
        r"\b(?:she|he|they|i)(?:'d|\s+would)\s+(?:like|prefer|rather)\b",
        r"喜欢|偏好|最爱|讨厌|爱吃|偏爱|还是想|更想|宁愿|宁可",
    ],
    "identity": [
        r"\b(?:i'?m|i\s+am)\s+an?\s+(?!(?:bit|little|lot|big|huge|fan|mess|sucker|few|great|good|"
        r"firm|true|strong)\b)[a-z]+",
        r"\bi\s+work\s+(?:as|at|for)\b",
        r"\bmy\s+name\s+is\b",
        rf"\b(?:i'?m|i\s+am)\s+(?-i:{_CAP}(?:\s+{_CAP})?)(?=\s*[,.!;]|\s*$)",
        r"\b(?:i'?m|i\s+am)\s+from\b",
        r"我是|我叫|我在.{1,12}工作",
    ],
    "introduction": [
        rf"(?-i:\b{_CAP}\s+{_CAP})\s+is\s+(?:our|my)\s+(?:new\s+)?[a-z]+",
        rf"\b(?:our|my)\s+(?:new\s+)?[a-z]+(?:\s+[a-z]+)?(?:\s+at\s+\w+)?\s+is\s+"
        rf"(?-i:(?:(?:Dr|Mr|Mrs|Ms|Prof)\.?\s+)?{_CAP})",
        r"\bintroduced\s+(?:me\s+to\s+|us\s+to\s+)?(?:another|a\s+new|her|his|their|our)\b",
        r",\s+who\s+(?:runs|leads|heads|manages)\b",
        r"^team\s*[:：]",
        r"是我们的(?:新)?(?:设计师|工程师|客户|负责人|经理|联系人|总监)",
    ],
    "activity": [
        rf"\b(?:i'?m|i\s+am|we'?re|we\s+are)\s+{_ADVERB}(?:busy\s+)?(?!(?:{_MENTAL_ING})\b)"
        r"[a-z]{3,}ing\b",
        rf"\b(?:i'?ve|we'?ve|i\s+have|we\s+have)\s+{_ADVERB}been\s+{_ADVERB}(?:busy\s+)?"
        rf"(?!(?:{_MENTAL_ING})\b)[a-z]{{3,}}ing\b",
        rf"^(?:(?:just|recently|finally)\s+)?(?:been\s+(?:busy\s+)?(?!(?:{_MENTAL_ING})\b)"
        r"[a-z]{3,}ing|started|began|joined)\b",
        r"\b(?:half\s+done|in\s+progress|under\s*way|on\s+track)\b",
        r"正在|一直在|最近在|进行中|推进中",
    ],
    "milestone": [
        rf"\b{_I}\s+(?:have\s+|'ve\s+|had\s+)?{_ADVERB}"
        r"(?:started|joined|launched|finished|won|lost|adopted|bought|moved|visited|went|took|got|"
        r"signed|applied|passed|graduated|opened|quit|began|completed|created|made|built|wrote|"
        r"painted|ran|met|received|volunteered|attended|organized|hosted|published|released|found|"
        r"became|learned|tried|celebrated|donated|performed|competed|traveled|travelled|"
        r"returned|reconnected|hiked|camped|scored|earned|raised|set\s+up|teamed\s+up|"
        r"signed\s+up|gave|had|did|saw|taught|designed|developed|expanded|rehearsed|"
        r"practiced|interviewed|enrolled|reached\s+out|landed|welcomed|studied|spoke|talked|"
        r"shared|sent|drove|flew|threw|held|told|brought|caught|visited|explored|finally)\b",
        rf"\b{_I}\s+(?:have\s+|'ve\s+|had\s+)?{_ADVERB}(?!(?:{_MENTAL})\b)[a-z]{{3,}}ed\b",
        r"\b(?:is|are)\s+(?:now\s+)?(?:done|finished|complete|completed|live)\b",
        r"\b(?:went|go)\s+(?:well|great|smoothly)\b|\bwrapped\s+up\b",
        r"(?:我|我们)(?:刚|已经|终于)?(?:开始|加入|完成|赢了|买了|去了|搬到|参加了|报名)",
        r"^(?:just\s+)?(?:took|went|visited|finished|bought|got\s+back|came\s+back)\s+(?:a|an|the|my|our|to|from|back)\b",
        r"\bi\s+was\s+(?:in|at)\s+(?-i:[A-Z])",
        r"完成了|做完了|结束了",
    ],
}
_COMPILED: dict[Kind, list[re.Pattern[str]]] = {
    kind: [re.compile(pattern, re.IGNORECASE) for pattern in patterns]
    for kind, patterns in _PATTERNS.items()
}

_FUTURE = re.compile(
    r"\b(?:will|won'?t|shall|gonna|going\s+to|plan(?:s|ning)?\s+(?:to|on)|intend|hoping\s+to|"
    r"hope\s+to|can'?t\s+wait|looking\s+forward|about\s+to|upcoming|soon|tomorrow|next|"
    r"'ll)\b|打算|计划|准备|将要|将会|要去|明天|下周|下个|明年|以后",
    re.IGNORECASE,
)
_PAST = re.compile(
    r"\b(?:yesterday|ago|last|was|were|did|had|went|took|got|made|saw|met|ran|won|lost|bought|"
    r"found|gave|left|began|came|told|felt|wrote|became|sent|spent|brought|caught|taught|"
    r"thought|built|paid|sold|held|kept|heard|led|fell|drove|flew|ate|swam|sang|wore|"
    r"\w{2,}ed)\b|了|过|昨天|上周|去年|上个月|前天",
    re.IGNORECASE,
)
_ONGOING = re.compile(
    r"\b(?:currently|still|these\s+days|nowadays|(?:i'?ve|we'?ve|have)\s+been\s+\w+ing|"
    r"(?:i'?m|we'?re)\s+\w+ing)\b|正在|一直",
    re.IGNORECASE,
)
_NON_VERBS_ED = frozenset({"need", "red", "bed", "shed", "seed", "speed", "feed", "weed", "bred"})


def kinds(sentence: str) -> list[Kind]:
    """The signals ``sentence`` carries, in ``KIND_ORDER`` (empty when none)."""
    return [kind for kind in KIND_ORDER if any(p.search(sentence) for p in _COMPILED[kind])]


def tense(sentence: str) -> Literal["past", "future"] | None:
    """The direction the grammar points to: future markers win over past ones; else ``None``."""
    if _FUTURE.search(sentence):
        return "future"
    for match in _PAST.finditer(sentence):
        if match.group().lower() not in _NON_VERBS_ED:
            return "past"
    return None


def is_ongoing(sentence: str) -> bool:
    """True when the sentence describes something in progress ("currently", "I've been …ing")."""
    return _ONGOING.search(sentence) is not None


def is_cancelled(sentence: str) -> bool:
    """True when the sentence says something was cancelled or called off."""
    return any(pattern.search(sentence) for pattern in _COMPILED["cancellation"])


_BREAK_WORDS = frozenset(
    [
        "for", "because", "since", "and", "but", "last", "yesterday", "today", "tonight", "this",
        "next", "in", "on", "at", "after", "before", "so", "as", "with", "instead", "now",
        "recently", "when", "while", "which", "who", "that", "to", "from", "by", "about", "like",
        "every", "each", "again", "too", "also", "already", "then", "is", "are",
    ]
)  # fmt: skip
_LEADING = frozenset({"the", "a", "an", "my", "our", "your", "his", "her", "their", "using", "use"})
_PHRASE_END = re.compile(r"[,;:!?()\[\]\"“”，。；：！？]|\.(?![A-Za-z0-9])")
_SWITCH_EN = [
    re.compile(
        r"\b(?:switched|moved|migrated|changed|converted|transitioned|went)\s+(?:over\s+)?"
        r"from\s+(?P<old>.+?)\s+(?:to|over\s+to)\s+(?P<new>.+)",
        re.IGNORECASE,
    ),
    re.compile(r"\breplaced\s+(?P<old>.+?)\s+with\s+(?P<new>.+)", re.IGNORECASE),
    re.compile(r"\b(?:use|using)\s+(?P<new>.+?)\s+instead\s+of\s+(?P<old>.+)", re.IGNORECASE),
    re.compile(
        r"\b(?:switched|moved|migrated|changed|converted|transitioned)\s+(?:over\s+)?to\s+(?P<new>.+)",
        re.IGNORECASE,
    ),
    re.compile(
        r"\b(?:switch|switching|migrate|migrating|move|moving)\s+(?:over\s+)?"
        r"(?:from\s+(?P<old>.+?)\s+)?to\s+(?P<new>.+)",
        re.IGNORECASE,
    ),
    re.compile(r"\bno\s+longer\s+(?:use|using|uses)\s+(?P<old>.+)", re.IGNORECASE),
    re.compile(r"\b(?:instead\s+of|rather\s+than)\s+(?P<old>.+)", re.IGNORECASE),
    re.compile(r"\b[Nn]o\s+(?:more\s+|hosted\s+|managed\s+)?(?P<old>[A-Z][\w.]*\w)"),
    re.compile(r"\b(?:stopped|quit)\s+using\s+(?P<old>.+)", re.IGNORECASE),
]
_HAN_WORD = r"(?:[^，。！？,.!?\s]|\.(?=[A-Za-z0-9]))"
_SWITCH_HAN = [
    re.compile(
        rf"从\s*(?P<old>{_HAN_WORD}{{1,16}}?)\s*(?:改用|换成|换到|转用|迁移到|迁到|改成)了?\s*"
        rf"(?P<new>{_HAN_WORD}{{1,16}})"
    ),
    re.compile(
        rf"把\s*(?P<old>{_HAN_WORD}{{1,16}}?)\s*(?:换成|改成)了?\s*(?P<new>{_HAN_WORD}{{1,16}})"
    ),
    re.compile(rf"(?:改用|换成|转用|迁移到|迁到)了?\s*(?P<new>{_HAN_WORD}{{1,16}})"),
    re.compile(rf"不再(?:用|使用)\s*(?P<old>{_HAN_WORD}{{1,16}})"),
    re.compile(rf"不用\s*(?P<old>{_HAN_WORD}{{1,16}}?)\s*了"),
]
_USES_EN = re.compile(
    r"\b(?:(?:started|start|began)\s+using|(?:we|i|they)\s+(?:now\s+)?use|uses|adopted|"
    r"(?:we|i|they)(?:'ll|\s+will)\s+(?:use|keep|adopt)|"
    r"let'?s\s+(?:use|go\s+with|keep|set\s+up|stick\s+with)|going\s+with|go\s+with|"
    r"decided\s+(?:to\s+use|on)|settled\s+on|opted\s+for|chose|^(?:tech\s+)?stack\s*:)\s+"
    r"(?P<new>.+)",
    re.IGNORECASE,
)
_USES_HAN = re.compile(rf"(?:使用|采用|选用|就用|决定用|开始用)\s*(?P<new>{_HAN_WORD}{{1,16}})")
_HAN_TAIL = re.compile(r"(?:了|吧|的|啊|呢|呀)+$")


def _phrase(text: str) -> str | None:
    """The short noun phrase at the start of ``text``: at most three words, no articles."""
    head = _PHRASE_END.split(text, 1)[0]
    if _HAN_TAIL.search(head) or any("\u4e00" <= ch <= "\u9fff" for ch in head):
        head = _HAN_TAIL.sub("", head.strip())
    kept: list[str] = []
    for word in head.split():
        lower = word.lower()
        if lower in _BREAK_WORDS and kept:
            break
        if not kept and lower in _LEADING:
            continue
        kept.append(word)
        if len(kept) == 3:
            break
    phrase = " ".join(kept).strip(" -–—'\"")
    return phrase or None


def switch_targets(sentence: str) -> tuple[str | None, str | None]:
    """``(old, new)`` of a change sentence ("switched from npm to pnpm", "从npm改用pnpm"): each
    from the first pattern that names it ("改用阿里云，不用 Fly.io 了" names both)."""
    old: str | None = None
    new: str | None = None
    for pattern in (*_SWITCH_HAN, *_SWITCH_EN):
        match = pattern.search(sentence)
        if match is None:
            continue
        found = match.groupdict()
        old = old or (_phrase(found["old"]) if found.get("old") else None)
        new = new or (_phrase(found["new"]) if found.get("new") else None)
        if old and new:
            break
    return old, new


def usage_target(sentence: str) -> str | None:
    """What a sentence says is used or adopted ("we use Postgres", "let's go with Vite")."""
    for pattern in (_USES_HAN, _USES_EN):
        match = pattern.search(sentence)
        if match is not None:
            return _phrase(match["new"])
    return None


__all__ = [
    "KIND_ORDER",
    "Kind",
    "is_cancelled",
    "is_ongoing",
    "kinds",
    "switch_targets",
    "tense",
    "usage_target",
]
