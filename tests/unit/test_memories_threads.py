"""A server extracts memories on many threads at once: the results are a serial run's."""

from concurrent.futures import ThreadPoolExecutor

import snowballstemmer

from engine.memories.offline import OfflineExtractor
from engine.memories.text import stem
from tests.unit.test_memories_builders import condition, conversation

WORDS = ["palpitating", "palpitations", "dizziness", "painful", "swelling", "headaches"] * 500


def test_threads_stemming_at_once_get_the_stems_of_one() -> None:
    want = [snowballstemmer.stemmer("english").stemWord(w) for w in WORDS]

    with ThreadPoolExecutor(max_workers=8) as pool:
        runs = list(pool.map(lambda _: [stem(w) for w in WORDS], range(8)))

    assert all(run == want for run in runs)


def test_threads_extracting_at_once_get_a_serial_runs_memories() -> None:
    messages = conversation(
        ("provider", "how have the headaches been ?"),
        ("patient", "worse , i get them every morning and my knees and ankles are swelling ."),
        ("provider", "any palpitations or dizziness ?"),
        ("patient", "no palpitations , but i'm dizzy when i stand up ."),
    )
    facts = [condition("condition:text:migraine", "Migraine")]

    def subjects(_: object) -> list[str]:
        return [c.subject for c in OfflineExtractor().extract(messages, facts).candidates]

    want = subjects(None)
    with ThreadPoolExecutor(max_workers=8) as pool:
        runs = list(pool.map(subjects, range(32)))

    assert want and all(run == want for run in runs)
