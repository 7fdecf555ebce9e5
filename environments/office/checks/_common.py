# --- checks every OfficeVerse task has (appended to each task's verifier by the generator) ---


@check("no-hidden-content", kind="anti_hack")
def test_no_hidden_content():
    for rel in E["deliverables"]:
        ov.assert_no_hidden_content(rel)


if E.get("unchanged"):
    @check("inputs-unchanged", kind="collateral")
    def test_inputs_unchanged():
        ov.assert_unchanged(E["unchanged"])


_JUDGE = ov.judge_scores()
if _JUDGE:  # only when the server-side judge ran (ENVHUB_JUDGE_URL); otherwise reward is mechanical only
    @check("quality-rubric", kind="quality")
    def test_quality_rubric(request):
        score = sum(_JUDGE.values()) / len(_JUDGE)
        request.node.user_properties.append(("score", score))
