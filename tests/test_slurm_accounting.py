"""How the SLURM tests read a Snakemake run's log (tests/slurm_accounting.py): plain jobs, local jobs and the
jobs of a group job (the rehearsal submits groups: scripts/slurm/rehearse_on_local_slurm.sh), and what a group
job asks SLURM for. No SLURM needed."""

from slurm_accounting import jobs_of_run, mismatched_jobs, rule_of, slurm_jobs

STAMP = "[Fri Nov 27 02:45:54 2026]"


def block(rule, output, *, mem=4000, runtime=30, partition="gpu", local=False, indent="", threads=None):
    """One job as Snakemake prints it (a group's jobs are indented by 4 under the group's header)."""
    lines = [STAMP, f"{'local' if local else ''}rule {rule}:", "    input: data/built/input.jsonl",
             f"    output: {output}", "    jobid: 7"]
    lines += [f"    threads: {threads}"] if threads else []
    lines += [f"    resources: tmpdir=/tmp, mem_mb={mem}, mem=4 GB, slurm_partition={partition}, "
              f"slurm_account=multivec, runtime={runtime}, gpu=0"]
    return "".join(f"{indent}{line}\n" for line in lines)


def group(name, *jobs):
    return f"{STAMP} Group job {name} (jobs in lexicogr. order):\n\n" + "\n".join(jobs)


LOG = "\n".join([
    block("distill_student_train", "models/distill/student/ls_cosine/seed13") + "Shell command: None\n",
    block("table2", "results/table2.csv", mem=8000, runtime=120, partition="cpu", local=True),
    group("nugget_lm",
          block("evaluate_nugget_lm", "results/nugget_lm/tsdae/seed13.json", mem=6000, runtime=20, indent="    ",
                threads=1) + "Shell command: None\n",  # a dry run prints this, unindented, between the jobs
          block("train_nugget_lm", "models/nugget_lm/tsdae/seed13", indent="    ")
          + "Submitted group job nugget_lm with external jobid 'Submitted batch job 42'.\n"),
    group("nugget_lm", block("train_nugget_lm", "models/nugget_lm/compressive/seed13", indent="    ")),
    block("encode_task", "data/encodings/tsdae_mt/seed13/rr"),
])


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

    sacct = [record("rule_distill_student_train_wildcards_x", 4000, 30),
             record("rule_encode_task_wildcards_y", 4000, 30),
             record("rule_nugget_lm_evaluate_nugget_lm_train_nugget_lm", 6000, 50),
             record("rule_nugget_lm_train_nugget_lm", 4000, 30)]
    assert mismatched_jobs(planned, sacct) == []
    # one job's request, not the group's
    sacct[2] = record("rule_nugget_lm_evaluate_nugget_lm_train_nugget_lm", 4000, 30)
    assert mismatched_jobs(planned, sacct) == [
        "nugget_lm_evaluate_nugget_lm_train_nugget_lm: asked [('COMPLETED', 'multivec', 'gpu', '6000M', 50, 1)], "
        "SLURM ran [('COMPLETED', 'multivec', 'gpu', '4000M', 30, 1)]"]


def test_a_group_named_by_wildcards_is_one_slurm_job_per_model():
    """The rehearsal bundles a model's PI and RR encodings as group "encode_{encoder}", so a group's name holds
    the encoder's path, slash included; its SLURM job is commented rule_<group>_encode_task."""
    log = "\n".join([
        group("encode_tsdae_mt/seed13",
              block("encode_task", "data/encodings/tsdae_mt/seed13/pi", indent="    "),
              block("encode_task", "data/encodings/tsdae_mt/seed13/rr", indent="    ")),
        block("encode_task", "data/encodings/base_encoder/pi"),
    ])
    asked = slurm_jobs(jobs_of_run(log))
    assert [(j["rule"], j["resources"]["runtime"]) for j in asked] == [
        ("encode_task", "30"), ("encode_tsdae_mt/seed13_encode_task", 60)]
    rules = {j["rule"] for j in asked}
    assert rule_of("rule_encode_tsdae_mt/seed13_encode_task", rules) == "encode_tsdae_mt/seed13_encode_task"
    assert rule_of("rule_encode_task_wildcards_base_encoder_pi", rules) == "encode_task"


def test_a_group_job_keeps_its_jobs_when_other_records_fall_between_them():
    """CI at 946c240: the rehearsal's parser counted five jobs (150 min) in a group that SLURM ran with six
    (180 min), because it stopped at the first line between a group's jobs that it did not expect (which line
    was not in the CI output; here, the executor's "Finished jobid" and progress records)."""
    interleaved = (f"{STAMP}\nFinished jobid: 3 (Rule: subencoder_eval_base)\n41 of 240 steps (17%) done\n")
    members = [block("subencoder_eval_base", f"results/subencoder/base/{name}.json", indent="    ")
               for name in ("a", "b", "c")]
    log = "\n".join([
        group("subencoder_base", members[0], interleaved + members[1], members[2]),
        interleaved,
        group("subencoder_base", block("subencoder_eval_base", "results/subencoder/base/d.json", indent="    ")),
    ])
    jobs = jobs_of_run(log)
    assert [(j["group"], j["group_job"], j["output"]) for j in jobs] == [
        ("subencoder_base", 0, ["results/subencoder/base/a.json"]),
        ("subencoder_base", 0, ["results/subencoder/base/b.json"]),
        ("subencoder_base", 0, ["results/subencoder/base/c.json"]),
        ("subencoder_base", 1, ["results/subencoder/base/d.json"])]
    assert [j["resources"]["runtime"] for j in slurm_jobs(jobs)] == [90, 30]


def test_lines_of_local_jobs_inside_a_record_do_not_cut_it():
    """Local jobs write their stderr to the same log, so a line of theirs can fall inside a job's record (each
    line of Snakemake's stderr is a separate write) or glue a progress bar without newline to the next line:
    the job keeps its resources and outputs."""
    foreign = "download: 45%|####5     | 9/20 [00:03<00:04]\n"
    member = block("subencoder_eval_base", "results/subencoder/base/a.json", mem=5000, indent="    ")
    head, tail = member.split("        output:")
    log = group("subencoder_base", head + foreign + "        output:" + tail,
                "download 100%|##########|\r" + block("subencoder_eval_base", "results/subencoder/base/b.json",
                                                      runtime=40, indent="    "))
    log += foreign + block("table2", "results/table2.csv", partition="cpu", local=True).replace(
        "    output:", foreign + "    output:")
    jobs = jobs_of_run(log)
    assert [(j["rule"], j["local"], j["output"], j["resources"]["mem_mb"], j["resources"]["runtime"])
            for j in jobs] == [
        ("table2", True, ["results/table2.csv"], "4000", "30"),
        ("subencoder_eval_base", False, ["results/subencoder/base/a.json"], "5000", "30"),
        ("subencoder_eval_base", False, ["results/subencoder/base/b.json"], "4000", "40")]
    assert [j["resources"]["runtime"] for j in slurm_jobs(jobs)] == [70]
