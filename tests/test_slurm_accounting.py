"""How the SLURM tests read a Snakemake run's log (tests/slurm_accounting.py): plain jobs, local jobs and the
jobs of a group job (the rehearsal submits groups: scripts/slurm/rehearse_on_local_slurm.sh), and what a group
job asks SLURM for. No SLURM needed."""

from slurm_accounting import jobs_of_run, mismatched_jobs, rule_of, slurm_jobs

RESOURCES = "tmpdir=/tmp, mem_mb={mem}, mem=4 GB, slurm_partition=gpu, slurm_account=multivec, runtime={runtime}, gpu=0"
LOG = f"""[Fri Nov 27 02:45:54 2026]
rule distill_student_train:
    input: data/built/distill/train.jsonl
    output: models/distill/student/ls_cosine/seed13
    jobid: 7
    resources: {RESOURCES.format(mem=4000, runtime=30)}
Shell command: None

[Fri Nov 27 02:45:55 2026]
localrule table2:
    input: results/table2/units.csv
    output: results/table2.csv
    jobid: 8
    resources: tmpdir=/tmp, mem_mb=8000, slurm_partition=cpu, slurm_account=multivec, runtime=120

[Fri Nov 27 02:45:56 2026] Group job nugget_lm (jobs in lexicogr. order):

    [Fri Nov 27 02:45:56 2026]
    rule evaluate_nugget_lm:
        input: models/nugget_lm/tsdae/seed13
        output: results/nugget_lm/tsdae/seed13.json
        jobid: 12
        threads: 1
        resources: {RESOURCES.format(mem=6000, runtime=20)}
Shell command: None

    [Fri Nov 27 02:45:56 2026]
    rule train_nugget_lm:
        input: data/built/lm/streams.jsonl
        output: models/nugget_lm/tsdae/seed13
        jobid: 11
        resources: {RESOURCES.format(mem=4000, runtime=30)}
Submitted group job nugget_lm with external jobid 'Submitted batch job 42'.

[Fri Nov 27 02:45:57 2026] Group job nugget_lm (jobs in lexicogr. order):

    [Fri Nov 27 02:45:57 2026]
    rule train_nugget_lm:
        input: data/built/lm/streams.jsonl
        output: models/nugget_lm/compressive/seed13
        jobid: 13
        resources: {RESOURCES.format(mem=4000, runtime=30)}

[Fri Nov 27 02:45:58 2026]
rule encode_task:
    input: models/nugget/mt/tsdae/seed13
    output: data/encodings/tsdae_mt/seed13/rr
    jobid: 50
    resources: {RESOURCES.format(mem=4000, runtime=30)}
"""


def test_jobs_of_a_run_include_each_job_of_each_group_job():
    jobs = jobs_of_run(LOG)
    assert [(j["rule"], j["local"], j["group"], j["group_job"]) for j in jobs] == [
        ("distill_student_train", False, None, None), ("table2", True, None, None),
        ("encode_task", False, None, None),
        ("evaluate_nugget_lm", False, "nugget_lm", 0), ("train_nugget_lm", False, "nugget_lm", 0),
        ("train_nugget_lm", False, "nugget_lm", 1)]
    evaluate = jobs[3]
    assert evaluate["output"] == ["results/nugget_lm/tsdae/seed13.json"]
    assert evaluate["resources"]["mem_mb"] == "6000" and evaluate["resources"]["threads"] == 1


def test_a_group_job_asks_for_its_largest_job_and_the_sum_of_their_times():
    asked = slurm_jobs(jobs_of_run(LOG))
    assert [j["rule"] for j in asked] == ["distill_student_train", "encode_task",
                                          "nugget_lm_evaluate_nugget_lm_train_nugget_lm", "nugget_lm_train_nugget_lm"]
    group = asked[2]["resources"]
    assert (group["mem_mb"], group["runtime"], group["threads"], group["slurm_partition"]) == (6000, 50, 1, "gpu")
    # the SLURM plugin comments a group job rule_<group>_<its rules>, with no wildcards
    rules = {j["rule"] for j in asked}
    assert rule_of("rule_nugget_lm_evaluate_nugget_lm_train_nugget_lm", rules) == asked[2]["rule"]
    assert rule_of("rule_encode_task_wildcards_tsdae_mt_seed13_rr", rules) == "encode_task"


def test_sacct_records_are_compared_with_the_group_jobs_request():
    planned = jobs_of_run(LOG)

    def record(comment, mem, minutes):
        return {"Comment": comment, "State": "COMPLETED", "Account": "multivec", "Partition": "gpu",
                "ReqMem": f"{mem}M", "Timelimit": f"00:{minutes:02d}:00", "AllocCPUS": "1"}

    sacct = [record("rule_distill_student_train_wildcards_x", 4000, 30), record("rule_encode_task_wildcards_y", 4000, 30),
             record("rule_nugget_lm_evaluate_nugget_lm_train_nugget_lm", 6000, 50),
             record("rule_nugget_lm_train_nugget_lm", 4000, 30)]
    assert mismatched_jobs(planned, sacct) == []
    sacct[2] = record("rule_nugget_lm_evaluate_nugget_lm_train_nugget_lm", 4000, 30)  # one job's request, not the group's
    assert mismatched_jobs(planned, sacct) == [
        "nugget_lm_evaluate_nugget_lm_train_nugget_lm: asked [('COMPLETED', 'multivec', 'gpu', '6000M', 50, 1)], "
        "SLURM ran [('COMPLETED', 'multivec', 'gpu', '4000M', 30, 1)]"]
