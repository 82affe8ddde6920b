"""Home's first screen, the lesson boxes and their answers, one vocabulary for bounds and certificates, and links
to the documentation that open (AppTest; the browser checks the same screen and box in tests/e2e)."""

from __future__ import annotations

import re

import pytest
from apptest import charts, errors, exceptions, goto, new_app, small_data

from dashboard import docs, registry
from dashboard.answers import ANSWERS
from dashboard.lessons import LESSONS
from dashboard.settings import TEACHING_SEED
from dpsynth_core.datasets import CLINIC_UNITS, clinic
from dpsynth_core.first_look import first_screen
from dpsynth_core.wording import epsilon_meaning, kept_sentence, membership_words

#: A document's path shown as plain text (not the text of a Markdown link to the Documentation page). Code spans
#: are left out: there a path is an example of a format (docs/README.md shows how docstrings cite a page).
PLAIN_DOC_PATH = re.compile(r"(?<!\[)docs/[a-z0-9-]+\.md(?!\]\(docs\?doc=)")
CODE_SPAN = re.compile(r"`[^`\n]*`")


def _texts(at) -> list[str]:
    return [str(e.value) for kind in (at.markdown, at.caption, at.info, at.warning) for e in kind]


def test_home_opens_on_the_clinic_table_beside_a_release_and_the_attack_it_stops():
    """Before any formula: the real and the synthetic rows, what is protected and kept (in the data's units, from
    the release shown), the membership question with its picture, and what ε means; the mathematics after."""
    at = new_app(small_data())
    assert not at.exception and not errors(at), (exceptions(at), errors(at))
    fs = first_screen(clinic(), epsilon=1.0, rng=TEACHING_SEED, units=CLINIC_UNITS)  # what the page computes
    real, synthetic = at.table[0], at.table[1]  # static tables (st.table)
    assert list(real.value.columns) == list(synthetic.value.columns) == list(clinic().domain.names)
    assert len(real.value) == len(synthetic.value) == 8
    assert real.value.equals(fs.real_rows) and synthetic.value.equals(fs.synthetic_rows)
    texts = _texts(at)
    assert any(kept_sentence(fs.kept) in t and t.startswith("**What is protected:**") for t in texts)
    question, table, released = membership_words(fs.demo, who="patient")
    assert question in texts and any(t.startswith(f"{table} {released}") for t in texts)
    assert any(epsilon_meaning(1.0, who="patient") in t for t in texts)
    specs = [c.proto.spec for c in charts(at)]  # the first is the membership question's (Vega-Lite)
    assert "releases from the table with the patient" in specs[0] and "the table with the patient" in specs[0]
    # the order on the page: the first screen, then the mathematics (the first formula is in "For the class")
    markdown = [m.value for m in at.markdown]
    first_formula = next(i for i, m in enumerate(markdown) if "$" in m)
    assert markdown.index(question) < first_formula
    assert at.header[0].value == "For the class: the mathematics"


def test_the_first_screen_follows_the_sidebar():
    at = new_app(small_data())
    at.button(key="home_eps_10").click().run()
    assert not at.exception and not errors(at)
    fs = first_screen(clinic(), epsilon=10.0, rng=TEACHING_SEED, units=CLINIC_UNITS)
    assert at.table[1].value.equals(fs.synthetic_rows)
    assert any(kept_sentence(fs.kept) in t for t in _texts(at))
    assert any("releases (PMM at ε = 10," in c.value for c in at.caption)


@pytest.mark.parametrize("url", [u for u, lesson in LESSONS.items() if lesson.ask])
def test_every_lesson_has_one_short_answer_per_question(url):
    answers = ANSWERS[url]
    assert len(answers) == len(LESSONS[url].ask), url
    assert all(20 <= len(a) <= 600 for a in answers), url  # short, and not empty


def test_no_answer_for_a_lesson_that_asks_nothing():
    assert set(ANSWERS) == {u for u, lesson in LESSONS.items() if lesson.ask}


def _lesson_box(at):
    return next(e for e in at.expander if e.label == "Lesson: try this")


@pytest.mark.parametrize("url", ["pmm", "psmm", "sparse_marginals", "low_dim", "audit", "home"])
def test_the_lesson_box_is_open_with_a_fixed_key_and_stays_so(url):
    """The box is drawn open with the same arguments and key on every run (an expander whose arguments change
    between runs is a new element, drawn closed: the box closed at the first ε change, or started closed after
    the page's second run). The browser test checks the frontend keeps it open (tests/e2e)."""
    at = new_app(small_data(2000))
    goto(at, url)
    box = _lesson_box(at)
    assert box.proto.expanded
    before = box.proto.SerializeToString()
    at.sidebar.select_slider(key="epsilon").set_value(0.5).run()
    at.run()  # e.g. the run the headline's W1 job asks for once it has the exact value
    after = _lesson_box(at)
    assert after.proto.expanded and after.proto.SerializeToString() == before
    answers = next(e for e in after.children.values() if getattr(e, "label", "") == "Answers (for the teacher)")
    assert not answers.proto.expanded  # folded: the teacher opens it
    shown = " ".join(m.value for m in answers.markdown)
    assert all(a in shown for a in ANSWERS[url])


def test_certified_marginals_counts_match_what_was_fitted():
    at = goto(new_app(small_data(2000)), "sparse_marginals")
    assert not at.exception and not errors(at)
    caption = next(c.value for c in at.caption if "candidate point" in c.value)
    assert "4,000 candidate points were drawn" in caption
    m = re.search(r"they fall on (\d+) distinct points \(every centre of the (\d+) × (\d+) grid\)", caption)
    assert m and int(m.group(1)) == int(m.group(2)) ** 2, caption
    used = int(re.search(r"; ([\d,]+) of them got weight", caption).group(1))
    assert 1 <= used <= int(m.group(1))
    assert next(n for n in at.number_input if n.key == "sparse_marginals__public_size").label == \
        "Candidate points to draw"
    assert any(n.label == "Certificate may fail with probability β" for n in at.number_input)
    maths = next(e for e in at.expander if e.label == "The mathematics")
    assert any("1 − β = 0.9" in m.value and "δ = 0" in m.value for m in maths.markdown)


def test_the_glossary_says_beta_for_the_certificate():
    text = (docs.DOCS / "glossary.md").read_text(encoding="utf-8")
    entry = text.split("### Certificate", 1)[1].split("###", 1)[0]
    assert "1 - \\beta" in entry and "Certificate may fail with probability β" in entry
    assert "1 - \\delta" not in entry


@pytest.mark.parametrize("url", ["home", "sparse_marginals", "low_dim", "compare", "glossary", "docs"])
def test_no_document_path_as_plain_text(url):
    """Every document a page names is a link that opens it on the Documentation page."""
    at = goto(new_app(small_data(2000)), url)
    assert not at.exception and not errors(at)
    for text in _texts(at):
        assert not PLAIN_DOC_PATH.search(CODE_SPAN.sub("", text)), (url, text)
    if url == "glossary":
        assert any("[docs/deviations.md](docs?doc=deviations)" in t for t in _texts(at))


@pytest.mark.parametrize("name", docs.names())
def test_every_document_renders_in_the_app(name):
    at = new_app(small_data())
    at.query_params["doc"] = name
    goto(at, "docs")
    assert not at.exception and not errors(at), (name, exceptions(at))
    assert at.selectbox(key="docs_doc").value == name
    body = " ".join(m.value for m in at.markdown)
    assert docs.title(name) in body
    assert not re.search(r"\]\([a-z0-9-]+\.md", body)  # links between documents point to the page
    assert at.query_params.get("doc") in (name, [name])  # the URL keeps the document


def test_doc_links_name_existing_documents():
    assert docs.doc_link("deviations") == "[docs/deviations.md](docs?doc=deviations)"
    with pytest.raises(ValueError, match="There is no document 'nothing'"):
        docs.doc_link("nothing")
    assert registry.by_url(docs.URL).params == ("doc",)
