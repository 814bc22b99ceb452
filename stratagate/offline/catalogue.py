"""Small fixed word lists the offline heuristics match against: tools, places, name cues.

Everything here is data. Tools carry a canonical name, the state key a choice of them sets
(``package_manager``, ``hosting`` …) and the surface forms they are written as (English and
Chinese). Places are a short gazetteer of cities and countries. Lists are deliberately small:
an unknown tool falls back to the key ``uses``, an unknown city is simply not a place.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Tool:
    """A known tool: its canonical name, the state key choosing it sets, how it is written."""

    name: str
    category: str
    forms: tuple[str, ...] = ()

    @property
    def surface_forms(self) -> tuple[str, ...]:
        """Every way of writing the tool, the canonical name first."""
        return (self.name, *(form for form in self.forms if form != self.name))


def _tools(category: str, *entries: str | tuple[str, ...]) -> list[Tool]:
    found = []
    for entry in entries:
        name, *forms = (entry,) if isinstance(entry, str) else entry
        found.append(Tool(name=name, category=category, forms=tuple(forms)))
    return found


TOOLS: tuple[Tool, ...] = (
    *_tools(
        "package_manager",
        "npm",
        "pnpm",
        "yarn",
        ("Bun", "bun"),
        "pip",
        "Poetry",
        "uv",
        "conda",
        "pipenv",
        "Cargo",
        "Maven",
        "Gradle",
        "Homebrew",
    ),
    *_tools(
        "database",
        ("PostgreSQL", "Postgres", "PostGIS"),
        "SQLite",
        "MySQL",
        "MariaDB",
        "MongoDB",
        "Redis",
        "DynamoDB",
        "Cassandra",
        "Oracle",
        ("SQL Server", "MSSQL"),
        "Supabase",
        "Firestore",
    ),
    *_tools(
        "hosting",
        "Fly.io",
        ("Alibaba Cloud", "阿里云", "Aliyun"),
        ("Tencent Cloud", "腾讯云"),
        ("Huawei Cloud", "华为云"),
        ("AWS", "Amazon Web Services"),
        ("Google Cloud", "GCP"),
        "Azure",
        "Vercel",
        "Netlify",
        "Heroku",
        "DigitalOcean",
        "Cloudflare",
        "Hetzner",
    ),
    *_tools(
        "frontend_framework",
        "React Native",
        "Expo",
        ("Next.js", "NextJS"),
        "Vite",
        "React",
        ("Vue", "Vue.js"),
        "Nuxt",
        "Angular",
        "Svelte",
        "SvelteKit",
        "Flutter",
    ),
    *_tools(
        "backend_framework",
        "Django",
        "Flask",
        "FastAPI",
        "Rails",
        "NestJS",
        "Laravel",
    ),
    *_tools("crash_reporting", "Sentry", "Bugsnag", "Crashlytics", "Rollbar"),
    *_tools("design_tool", "Figma", ("Adobe XD", "XD"), "Penpot"),
    *_tools(
        "ci",
        "GitHub Actions",
        "Jenkins",
        "CircleCI",
        "GitLab CI",
        ("Travis CI", "Travis"),
        "Buildkite",
    ),
    *_tools(
        "editor",
        "Vim",
        ("Neovim", "nvim"),
        "Emacs",
        ("VS Code", "VSCode"),
        "Sublime Text",
        "IntelliJ",
        "PyCharm",
        "Zed",
    ),
    *_tools(
        "language",
        "Python",
        "Rust",
        "Golang",
        "Java",
        "JavaScript",
        "TypeScript",
        "Kotlin",
        "Swift",
        "C++",
        "C#",
        "PHP",
        "Scala",
        "Elixir",
    ),
    *_tools("os", "Linux", "Windows", "macOS", "Ubuntu", "Debian", "Fedora"),
    *_tools("version_control", "Git", "Mercurial", ("SVN", "Subversion")),
    *_tools("bundler", "webpack", "Rollup", "esbuild", "Parcel"),
    *_tools("container_runtime", "Docker", "Podman", "Kubernetes"),
)
"""Known tools by category; a later choice in the same category supersedes the earlier one."""

CASE_SENSITIVE_FORMS = frozenset(
    {"Rust", "Swift", "Java", "Zed", "Oracle", "Rails", "Flask", "Bun", "Git", "XD", "Travis",
     "Cargo", "Parcel", "Windows", "Expo", "Poetry", "Rollup"}
)  # fmt: skip
"""Forms that are also ordinary words: matched only when written exactly so."""

PLACES: dict[str, tuple[str, ...]] = {
    "Shanghai": ("上海",), "Beijing": ("北京",), "Hangzhou": ("杭州",), "Kunming": ("昆明",),
    "Shenzhen": ("深圳",), "Guangzhou": ("广州",), "Chengdu": ("成都",), "Nanjing": ("南京",),
    "Wuhan": ("武汉",), "Xi'an": ("西安",), "Suzhou": ("苏州",), "Hong Kong": ("香港",),
    "Taipei": ("台北",), "Tokyo": ("东京",), "Osaka": ("大阪",), "Seoul": ("首尔",),
    "Singapore": ("新加坡",), "Bangkok": ("曼谷",), "Sydney": ("悉尼",), "Melbourne": ("墨尔本",),
    "London": ("伦敦",), "Paris": ("巴黎",), "Berlin": ("柏林",), "Munich": ("慕尼黑",),
    "Madrid": ("马德里",), "Barcelona": (), "Rome": ("罗马",), "Amsterdam": (), "Dublin": (),
    "Zurich": (), "Stockholm": (), "Vienna": (), "Prague": (), "Lisbon": (),
    "New York": ("纽约", "NYC"), "San Francisco": ("旧金山",), "Los Angeles": ("洛杉矶",),
    "Seattle": ("西雅图",), "Boston": (), "Chicago": (), "Austin": (), "Toronto": ("多伦多",),
    "Vancouver": ("温哥华",), "Mumbai": (), "Bangalore": (), "Delhi": (), "Dubai": (),
    "China": ("中国", "mainland China", "中国大陆"), "Japan": ("日本",), "Korea": ("韩国",),
    "India": ("印度",), "United States": ("美国", "USA", "the US"), "United Kingdom": ("英国", "UK"),
    "Germany": ("德国",), "France": ("法国",), "Spain": ("西班牙",), "Italy": ("意大利",),
    "Canada": ("加拿大",), "Australia": ("澳大利亚",), "Brazil": ("巴西",), "Mexico": ("墨西哥",),
    "Sweden": ("瑞典",), "Norway": (), "Netherlands": ("荷兰",), "Switzerland": ("瑞士",),
    "England": (), "Scotland": (), "Ireland": (), "Wales": (), "Portugal": (), "Greece": (),
    "Turkey": (), "Egypt": (), "Thailand": ("泰国",), "Vietnam": ("越南",), "Indonesia": (),
    "Philippines": (), "Argentina": (), "Chile": (), "Peru": (), "Colombia": (),
    "New Zealand": ("新西兰",), "South Africa": (), "Kenya": (), "Nigeria": (), "Poland": (),
    "Austria": (), "Belgium": (), "Denmark": (), "Finland": (), "Iceland": (), "Russia": (),
    "Ukraine": (), "Israel": (), "Morocco": (), "Cuba": (), "Jamaica": (), "Nepal": (),
    "California": (), "Florida": (), "Oregon": (), "Texas": (), "Michigan": (), "Colorado": (),
    "Arizona": (), "Nevada": (), "Hawaii": (), "Alaska": (), "Ohio": (), "Illinois": (),
    "Minnesota": (), "Massachusetts": (), "Tennessee": (), "Utah": (), "Montana": (),
    "Wisconsin": (), "Pennsylvania": (), "New Jersey": (), "North Carolina": (), "Virginia": (),
    "Edinburgh": (), "Glasgow": (), "Manchester": (), "Galway": (), "Venice": (),
    "Florence": (), "Milan": (), "Athens": (), "Istanbul": (), "Cairo": (), "Miami": (),
    "Orlando": (), "Tampa": (), "Denver": (), "Portland": (), "Atlanta": (), "Houston": (),
    "Dallas": (), "Philadelphia": (), "Las Vegas": (), "San Diego": (), "Nashville": (),
    "Detroit": (), "New Orleans": (), "Honolulu": (), "Montreal": (), "Mexico City": (),
    "Rio de Janeiro": (), "Buenos Aires": (), "Cape Town": (), "Hanoi": (), "Bali": (),
}  # fmt: skip
"""Canonical city, state and country names with their other spellings (Chinese included): a
general list of well-known places, not one drawn from any evaluation conversation."""

GEOGRAPHIC_WORDS: tuple[str, ...] = (
    "National Park", "Mountains", "Mountain", "Coast", "Canyon", "Falls", "Tower", "Lake",
    "River", "Valley", "Islands", "Island", "Beach", "Bay", "Desert", "Forest", "Park",
)  # fmt: skip
"""``<Name> <word>`` is a place ("Grand Canyon", "Smoky Mountains", "Eiffel Tower")."""

REGIONS: tuple[str, ...] = (
    "Midwest", "Pacific Northwest", "Northwest", "Northeast", "Southwest", "Southeast",
    "East Coast", "West Coast", "Himalayas", "Alps", "Andes", "Caribbean", "Scandinavia",
    "Middle East", "Balkans",
)  # fmt: skip
"""Regions named without a geographic word."""

FACILITY_WORDS: tuple[str, ...] = (
    "field station",
    "research station",
    "office",
    "campus",
    "headquarters",
    "warehouse",
    "factory",
    "branch",
)
"""``<Place or Name> <facility>`` is a place of its own ("Shanghai office", "Kunming field
station"); the longer words come first so they win."""

HAN_FACILITY_WORDS: tuple[str, ...] = ("野外站", "工作站", "办公室", "总部", "园区", "分公司")

ORG_SUFFIXES: frozenset[str] = frozenset(
    {"Institute", "University", "College", "Academy", "School", "Inc", "Ltd", "LLC", "Corp",
     "Corporation", "Company", "Co", "Lab", "Labs", "Laboratory", "Studio", "Studios",
     "Foundation", "Agency", "Association", "Society", "Museum", "Hospital", "Group", "Bank",
     "Council", "Ministry", "Institution", "Technologies", "Systems"}
)  # fmt: skip
"""A capitalised phrase ending in one of these is an organization ("Northridge Ecology
Institute", "Acme Inc.")."""

HAN_ORG_SUFFIXES: tuple[str, ...] = (
    "研究所",
    "研究院",
    "公司",
    "集团",
    "大学",
    "学院",
    "实验室",
    "工作室",
    "协会",
    "基金会",
    "医院",
    "银行",
)

PERSON_TITLES: frozenset[str] = frozenset({"Dr", "Mr", "Mrs", "Ms", "Miss", "Prof", "Professor"})

HAN_SURNAMES = frozenset(
    "王李张刘陈杨黄赵吴周徐孙马朱胡郭何高林罗郑梁谢宋唐许韩冯邓曹彭曾肖田董袁潘于蒋蔡余杜叶程苏魏吕"
    "丁任沈姚卢姜崔钟谭陆汪范金石廖贾夏韦付方白邹孟熊秦邱江尹薛闫段雷侯龙史陶黎贺顾毛郝龚邵万钱严覃"
    "武戴莫孔向汤"
)
"""Common single-character Chinese surnames: a Han name is one of these plus one or two
characters, and is accepted only where the wording says it is a name."""

HAN_HONORIFICS: tuple[str, ...] = ("先生", "女士", "小姐", "博士", "教授", "老师", "经理", "总监")


def _word_set(text: str) -> frozenset[str]:
    return frozenset(text.split())


NON_NAME_WORDS = _word_set(
    """
    A An The And But Or So Then Also Hi Hello Hey Thanks Thank Ok Okay Yes No Yeah Sure Great Good
    Nice Cool Bad Sounds Sound Noted Note Notes Understood Got Plan Plans Team Stack Update Status
    Question Quick Another Final First Last Next This That These Those There Here It Its We Our
    Us You Your He She They Their His Her I My Me Let Lets Please Maybe Well Oh Wow Happy Sorry
    Instead Back Today Tomorrow Yesterday Tonight Morning Evening Week Weekend Month Year
    Monday Tuesday Wednesday Thursday Friday Saturday Sunday January February March April May
    June July August September October November December Spring Summer Autumn Fall Winter
    Christmas Easter New Remind Write Draft Post Add Adds Closes Fixes Run Ran Check Steps Step
    Feasible Excellent Congratulations Classic Schedule Start Looking Pilot Prototype Demo Launch
    Client Contact Staff Board App Apps Store Cloud Web Mobile Engineer Engineers Developer
    Designer Manager Director Lead Product Project Office Station Field Dashboard Map Photos
    Photo Two Three Four Five One Half Anytime Welcome Excellent Great Done Fixed Finished
    Confirmed Good Team Backend Frontend Server Database Region Issue Issues News Reminder
    Today's English Chinese Spanish French German Japanese Korean Italian Mandarin Cantonese
    Beta Alpha Version Release Staging Production Main Feature Features API PR CI UI UX
    Ask Tell Call Email Ping Send Give Show Make Keep Take Get Put Set Use Try Meet Invite See
    Say Talk Text Message Book Pick Help Find Bring Wish Ran Thoughts Dear With For From To At
    In On By After Before Since Until Like Via Of If When While Because Both Each Every Some Any
    All Most Many Much Just Only Even Still Never Always Sometimes Shortlist Starting Bad Today
    """
)
"""Capitalised words that are never (part of) a person's name: sentence openers, calendar
words, job and product nouns."""

TOPIC_GROUPS: tuple[frozenset[str], ...] = (
    frozenset({"launch", "launches", "launching", "go-live", "release", "上线", "发布"}),
    frozenset({"offsite", "off-site", "团建"}),
    frozenset({"demo", "演示"}),
    frozenset({"pilot", "试点"}),
    frozenset({"meeting", "会议", "开会"}),
    frozenset({"interview", "面试"}),
    frozenset({"deadline", "截止"}),
    frozenset({"trip", "旅行", "出差"}),
    frozenset({"party", "聚会"}),
)
"""Words naming the same scheduled thing across English and Chinese (a move or cancellation
of one matches a plan worded with another)."""

TOPIC_STOP_WORDS = _word_set(
    """
    cancel cancelled canceled cancelling called off news bad sadly unfortunately scrapped
    dropped moved move moving changed change changing wants want wanted plan plans planned
    planning postponed delayed rescheduled pushed instead date 取消 改成 改到 日期 推迟 了
    """
)
"""Words of a cancellation or a move that say what happened to a plan, not what it was."""

LAUNCH_WORDS: tuple[str, ...] = ("launch", "go-live", "go live", "上线", "发布日期")
"""Words that make a dated plan the project's ``launch_date``."""


__all__ = [
    "CASE_SENSITIVE_FORMS",
    "FACILITY_WORDS",
    "GEOGRAPHIC_WORDS",
    "HAN_FACILITY_WORDS",
    "HAN_HONORIFICS",
    "HAN_ORG_SUFFIXES",
    "HAN_SURNAMES",
    "LAUNCH_WORDS",
    "NON_NAME_WORDS",
    "ORG_SUFFIXES",
    "PERSON_TITLES",
    "PLACES",
    "REGIONS",
    "TOOLS",
    "TOPIC_GROUPS",
    "TOPIC_STOP_WORDS",
    "Tool",
]
