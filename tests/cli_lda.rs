//! `dp-bayes fit lda` / `infer` / `replay` end to end on the small committed text
//! `tests/data/lda_three_topics.txt` (360 synthetic lines about three themes): private
//! vocabulary + private fit -> model.json -> infer in new processes (bit for bit), the composed
//! guarantee, the ledger's replay, typed errors.

mod common;

use std::path::{Path, PathBuf};

use common::{ok_json, read_json, run, run_ok, s, temp_dir};
use serde_json::Value;

/// Exit 2 and a one-line error (`dp-bayes: error: ...`) containing every `needles`.
fn fails_with(args: &[&str], needles: &[&str]) {
    let err = common::fails_with(args, needles);
    assert!(err.starts_with("dp-bayes: error: "), "{err}");
}

fn corpus() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/lda_three_topics.txt")
}

/// A private fit: epsilon 4 in total (1 for the vocabulary by default), seeded on purpose.
fn fit_private(out: &Path) -> Value {
    let c = corpus();
    ok_json(&[
        "fit",
        "lda",
        "--text",
        s(&c),
        "--topics",
        "3",
        "--epsilon",
        "4",
        "--delta",
        "1e-5",
        "--max-words-per-doc",
        "5",
        "--population",
        "360",
        "--batch-size",
        "60",
        "--passes",
        "3",
        "--doc-length",
        "8",
        "--noise-seed",
        "1",
        "--vocab-noise-seed",
        "2",
        "--resample-seed",
        "3",
        "--out",
        s(out),
        "--json",
    ])
}

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("{v} is not a number"))
}

#[test]
fn private_text_fit_composes_vocabulary_and_fit_and_infers_bit_for_bit() {
    let tmp = temp_dir("lda-text");
    let dir = tmp.path();
    let out = dir.join("run");
    let r = fit_private(&out);
    assert_eq!(r["model"], "lda");
    assert_eq!(r["private"], true);
    let v = &r["settings"]["vocabulary"];
    assert_eq!(f(&v["epsilon"]), 1.0, "a quarter of --epsilon by default");
    assert!(v["size"].as_u64().unwrap() >= 3, "{v}");
    // The run's delta is the sum of the parts; its epsilon is the replay of the joint ledger,
    // never above the basic composition of the selection and the fit here, and never below the
    // fit's own.
    let (ef, df) = (
        f(&r["settings"]["fit_epsilon"]),
        f(&r["settings"]["fit_delta"]),
    );
    let basic = f(&r["settings"]["epsilon_basic_composition"]);
    assert_eq!(basic, f(&v["epsilon"]) + ef);
    assert_eq!(f(&r["delta"]), f(&v["delta"]) + df);
    assert!(
        f(&r["epsilon"]) <= basic && basic <= 4.0 && ef <= 3.0,
        "{r}"
    );
    assert!(f(&r["epsilon"]) > ef, "{r}");
    // The ledger holds the selection's entry as well as the fit's.
    let ledger: Value = read_json(&out.join("ledger.json"));
    let text = ledger.to_string();
    assert!(
        text.contains("lda vocabulary: Gaussian partition selection"),
        "{text}"
    );
    // The model file carries the same guarantee.
    let model: Value = read_json(&out.join("model.json"));
    assert_eq!(model["format_version"], 1);
    let g = &model["model"]["provenance"]["guarantee"];
    assert_eq!((f(&g[0]), f(&g[1])), (f(&r["epsilon"]), f(&r["delta"])));

    let new = dir.join("new.txt");
    std::fs::write(
        &new,
        "The river, the ocean and a boat.\nA comet and a star; zebra.\nzebra\n",
    )
    .unwrap();
    let m = out.join("model.json");
    let args = ["infer", "--model", s(&m), "--text", s(&new), "--json"];
    let a = run_ok(&args);
    let b = run(&args);
    assert_eq!(a.stdout, b.stdout, "two processes infer bit for bit");
    let j: Value = serde_json::from_slice(&a.stdout).unwrap();
    assert_eq!(j["documents"], 3);
    let theta: Vec<f64> = j["results"][0]["proportions"]
        .as_array()
        .unwrap()
        .iter()
        .map(f)
        .collect();
    assert_eq!(theta.len(), 3);
    assert!((theta.iter().sum::<f64>() - 1.0).abs() < 1e-9);
    assert_eq!(j["results"][2]["no_known_words"], true);
    assert_eq!(j["diagnostics"]["private"], false);
    assert!(j["diagnostics"]["unknown_tokens_dropped"].as_u64().unwrap() >= 2);
    // CSV form: a header and one line per document with a known word.
    let csv = run_ok(&["infer", "--model", s(&m), "--text", s(&new)]);
    let csv = String::from_utf8(csv.stdout).unwrap();
    assert_eq!(csv.lines().count(), 3, "{csv}");
    assert!(csv.starts_with("document,topic_0,topic_1,topic_2\n"));
}

#[test]
fn replay_of_the_lda_ledger_states_the_threshold_delta_and_covers_the_fit() {
    let tmp = temp_dir("lda-replay");
    let dir = tmp.path();
    let out = dir.join("run");
    let r = fit_private(&out);
    let ledger = out.join("ledger.json");
    let delta = f(&r["delta"]);
    let d = format!("{delta:e}");
    let rep = ok_json(&["replay", s(&ledger), "--delta", &d, "--json"]);
    let threshold = f(&r["settings"]["vocabulary"]["threshold_delta"]);
    assert_eq!(f(&rep["extra_delta"]), threshold);
    assert_eq!(f(&rep["delta"]), delta);
    assert_eq!(f(&rep["events_delta"]), delta - threshold);
    // The threshold's epsilon share is added to the events' answer.
    let extra_eps = f(&rep["extra_epsilon"]);
    assert_eq!(extra_eps, -(-threshold).ln_1p());
    assert_eq!(f(&rep["epsilon"]), f(&rep["events_epsilon"]) + extra_eps);
    // The replay gives the fit's epsilon bit for bit, and dp-accountant's own replay agrees.
    assert_eq!(f(&rep["epsilon"]), f(&r["epsilon"]), "{rep} vs {r}");
    let text = std::fs::read_to_string(&ledger).unwrap();
    let acc = dp_accountant::cli::execute(&dp_accountant::cli::CliCommand::Replay {
        ledger_json: text,
        source: "ledger.json".into(),
        delta,
    })
    .unwrap();
    assert_eq!(acc.json["epsilon"], rep["epsilon"]);
    // The whole ledger (vocabulary and fit) is never below the fit's own guarantee.
    assert!(
        f(&rep["epsilon"]) >= f(&r["settings"]["fit_epsilon"]),
        "{rep} vs {r}"
    );
    // A delta that the threshold alone exhausts is refused.
    fails_with(
        &["replay", s(&ledger), "--delta", &format!("{threshold:e}")],
        &["--delta", "extra delta"],
    );
}

#[test]
fn public_vocabulary_and_non_private_fits() {
    let tmp = temp_dir("lda-public");
    let dir = tmp.path();
    let vocab = dir.join("vocab.txt");
    std::fs::write(
        &vocab,
        "boat\ncomet\nmarket\nocean\nplanet\nprice\nriver\nstar\n",
    )
    .unwrap();
    let c = corpus();
    let out = dir.join("pub");
    let r = ok_json(&[
        "fit",
        "lda",
        "--text",
        s(&c),
        "--vocab",
        s(&vocab),
        "--topics",
        "3",
        "--epsilon",
        "1",
        "--population",
        "360",
        "--batch-size",
        "60",
        "--doc-length",
        "8",
        "--out",
        s(&out),
        "--json",
    ]);
    assert_eq!(r["settings"]["vocab_size"], 8);
    assert!(f(&r["epsilon"]) <= 1.0);
    let np = dir.join("np");
    let r = ok_json(&[
        "fit",
        "lda",
        "--text",
        s(&c),
        "--topics",
        "3",
        "--batch-size",
        "60",
        "--out",
        s(&np),
        "--json",
    ]);
    assert_eq!(r["private"], false);
    assert_eq!(r["epsilon"], "inf");
    assert!(!np.join("ledger.json").exists());
}

#[test]
fn bad_lda_inputs_are_typed_errors_naming_the_flag_or_file() {
    let tmp = temp_dir("lda-bad");
    let dir = tmp.path();
    let c = corpus();
    let out = dir.join("o");
    let base = ["fit", "lda", "--text", s(&c), "--out", s(&out)];
    let with = |extra: &[&'static str]| -> Vec<String> {
        base.iter()
            .map(|x| x.to_string())
            .chain(extra.iter().map(|x| x.to_string()))
            .collect()
    };
    let call = |v: Vec<String>, needles: &[&str]| {
        let a: Vec<&str> = v.iter().map(String::as_str).collect();
        fails_with(&a, needles);
    };
    call(with(&["--epsilon", "1"]), &["--population"]);
    call(
        with(&[
            "--epsilon",
            "1",
            "--population",
            "360",
            "--epsilon-vocab",
            "1",
        ]),
        &["--epsilon-vocab"],
    );
    call(
        with(&["--epsilon-vocab", "0.5"]),
        &["--epsilon-vocab", "without --epsilon"],
    );
    call(with(&["--resample-seed", "3"]), &["--resample-seed"]);
    // A missing text file and a vocabulary file with a duplicate name the file (and line).
    let missing = dir.join("missing.txt");
    fails_with(
        &["fit", "lda", "--text", s(&missing), "--out", s(&out)],
        &["missing.txt"],
    );
    let dup = dir.join("dup.txt");
    std::fs::write(&dup, "river\nriver\n").unwrap();
    fails_with(
        &[
            "fit",
            "lda",
            "--text",
            s(&c),
            "--vocab",
            s(&dup),
            "--out",
            s(&out),
        ],
        &["dup.txt", "2"],
    );
    // A private fit on --corpus needs --vocab-public.
    fails_with(
        &[
            "fit",
            "lda",
            "--corpus",
            s(dir),
            "--epsilon",
            "1",
            "--population",
            "10",
            "--out",
            s(&out),
        ],
        &["--vocab-public"],
    );
    // infer: a corrupt and a newer model file.
    let bad = dir.join("bad.json");
    std::fs::write(
        &bad,
        "{\"format\": \"vips-models/lda-model\", \"format_version\": 1}",
    )
    .unwrap();
    fails_with(
        &["infer", "--model", s(&bad), "--text", s(&c)],
        &["bad.json", "corrupt"],
    );
    std::fs::write(
        &bad,
        "{\"format\": \"vips-models/lda-model\", \"format_version\": 9}",
    )
    .unwrap();
    fails_with(
        &["infer", "--model", s(&bad), "--text", s(&c)],
        &["bad.json", "newer"],
    );
    assert!(!out.join("model.json").exists(), "nothing written on error");
}

/// A letters-only word for index `j` (the tokenizer drops digits): `wrd` + two letters.
fn word(j: usize) -> String {
    format!(
        "wrd{}{}",
        char::from(b'a' + (j / 26) as u8),
        char::from(b'a' + (j % 26) as u8)
    )
}

/// Issue 20: the vocabulary's per-document word sample, end to end through `fit lda --text`.
/// Two corpora that differ in one document (added in front, so that a random stream shared
/// across documents in corpus order would shift every other document's sample) are fitted with
/// the same seeds. Every document has more than `k` distinct words, so every sample matters;
/// the word counts spread around the threshold, so selections vary with the seed. The two
/// selected vocabularies may differ only in the extra document's sampled words (the sample the
/// library draws for that document under the key the seed gives); each word's noise is the
/// same in both runs.
#[test]
fn neighbouring_corpora_select_vocabularies_that_differ_only_in_the_extra_documents_sample() {
    use dp_bayes::dp_core::RngPolicy;
    use dp_bayes::vips_models::lda::text::Tokenizer;
    use dp_bayes::vips_models::lda::vocabulary::{WordSampleKey, bounded_words};
    use std::collections::BTreeSet;
    const K: usize = 5;
    let tmp = temp_dir("lda-neighbours");
    let dir = tmp.path();
    // Word j is in document d when (d + 3 j) % (j % 9 + 2) == 0: 8 to 20 distinct words per
    // document, 40 words with counts from about 40 to 200.
    let lines: Vec<String> = (0..400usize)
        .map(|d| {
            (0..40usize)
                .filter(|j| (d + 3 * j) % (j % 9 + 2) == 0)
                .map(word)
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect();
    let extra: String = (0..12)
        .map(|i| format!("xtra{}", char::from(b'a' + i as u8)))
        .chain((0..40).step_by(3).map(word))
        .collect::<Vec<_>>()
        .join(" ");
    let small = dir.join("small.txt");
    let big = dir.join("big.txt");
    std::fs::write(&small, lines.join("\n") + "\n").unwrap();
    std::fs::write(&big, format!("{extra}\n{}\n", lines.join("\n"))).unwrap();
    let vocab = |text: &Path, out: &Path, seed: u64| -> BTreeSet<String> {
        let seed = seed.to_string();
        ok_json(&[
            "fit",
            "lda",
            "--text",
            s(text),
            "--topics",
            "2",
            "--epsilon",
            "8",
            "--delta",
            "1e-5",
            "--max-words-per-doc",
            "5",
            "--population",
            "400",
            "--batch-size",
            "200",
            "--doc-length",
            "8",
            "--noise-seed",
            "1",
            "--vocab-noise-seed",
            &seed,
            "--resample-seed",
            "3",
            "--out",
            s(out),
            "--json",
        ]);
        let model: Value = read_json(&out.join("model.json"));
        model["model"]["vocabulary"]
            .as_array()
            .unwrap_or_else(|| panic!("no model.vocabulary in {model}"))
            .iter()
            .map(|w| w.as_str().unwrap().to_string())
            .collect()
    };
    let extra_tokens = Tokenizer::english().tokenize(&extra);
    assert_eq!(extra_tokens.len(), 26, "{extra_tokens:?}");
    let (mut union, mut intersection) = (BTreeSet::new(), None::<BTreeSet<String>>);
    for seed in 0..4u64 {
        let a = vocab(&small, &dir.join(format!("small{seed}")), seed);
        let b = vocab(&big, &dir.join(format!("big{seed}")), seed);
        let key = WordSampleKey::new(RngPolicy::Seeded { seed }).unwrap();
        let allowed: BTreeSet<&str> = bounded_words(&extra_tokens, K, &key).into_iter().collect();
        assert_eq!(allowed.len(), K);
        for w in a.symmetric_difference(&b) {
            assert!(
                allowed.contains(w.as_str()),
                "seed {seed}: `{w}` differs but is not in the extra document's sample {allowed:?}"
            );
        }
        union.extend(a.iter().cloned());
        intersection = Some(match intersection {
            None => a,
            Some(i) => i.intersection(&a).cloned().collect(),
        });
    }
    // The threshold is among the counts: the selections vary with the seed (so a sample that
    // moved with the corpus order would show).
    assert!(union.len() > intersection.unwrap().len(), "{union:?}");
}
