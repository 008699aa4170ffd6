//! Word error rate, after the normalisation that keeps it about words rather than
//! spelling: case, punctuation, numbers written as digits, and a few abbreviations.

/// Words of `text`, normalised: lowercase, punctuation and apostrophes dropped, hyphens, slashes and colons split, numbers 0 to 9999 spelled out, common abbreviations expanded.
pub fn normalise(text: &str) -> Vec<String> {
    let lower = text.to_lowercase().replace(['-', '/', ':'], " ");
    let mut out = Vec::new();
    for raw in lower.split_whitespace() {
        // "it's" and "its" are the same word to a listener.
        let word: String = raw.chars().filter(|c| c.is_alphanumeric()).collect();
        if word.is_empty() {
            continue;
        }
        if let Ok(n) = word.parse::<u32>()
            && n < 10_000
        {
            out.extend(spell(n).split(' ').map(str::to_owned));
            continue;
        }
        let expanded = match word.as_str() {
            "mr" => "mister",
            "mrs" => "missus",
            "dr" => "doctor",
            "st" => "saint",
            "ok" | "okay" => "okay",
            "vs" => "versus",
            other => other,
        };
        out.push(expanded.to_owned());
    }
    out
}

fn spell(n: u32) -> String {
    const ONES: [&str; 20] = [
        "zero",
        "one",
        "two",
        "three",
        "four",
        "five",
        "six",
        "seven",
        "eight",
        "nine",
        "ten",
        "eleven",
        "twelve",
        "thirteen",
        "fourteen",
        "fifteen",
        "sixteen",
        "seventeen",
        "eighteen",
        "nineteen",
    ];
    const TENS: [&str; 10] = [
        "", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety",
    ];
    match n {
        0..=19 => ONES[n as usize].to_owned(),
        20..=99 if n.is_multiple_of(10) => TENS[(n / 10) as usize].to_owned(),
        20..=99 => format!("{} {}", TENS[(n / 10) as usize], ONES[(n % 10) as usize]),
        100..=999 if n.is_multiple_of(100) => format!("{} hundred", ONES[(n / 100) as usize]),
        100..=999 => format!("{} hundred {}", ONES[(n / 100) as usize], spell(n % 100)),
        _ if n.is_multiple_of(1000) => format!("{} thousand", spell(n / 1000)),
        _ => format!("{} thousand {}", spell(n / 1000), spell(n % 1000)),
    }
}

/// Word error rate of `hypothesis` against `reference`: (substitutions + deletions +
/// insertions) / reference words, by Levenshtein distance over normalised words.
pub fn wer(reference: &str, hypothesis: &str) -> f64 {
    let r = normalise(reference);
    let h = normalise(hypothesis);
    if r.is_empty() {
        return if h.is_empty() { 0.0 } else { 1.0 };
    }
    let mut row: Vec<usize> = (0..=h.len()).collect();
    for (i, rw) in r.iter().enumerate() {
        let mut diag = row[0];
        row[0] = i + 1;
        for (j, hw) in h.iter().enumerate() {
            let sub = diag + usize::from(rw != hw);
            diag = row[j + 1];
            row[j + 1] = sub.min(row[j] + 1).min(row[j + 1] + 1);
        }
    }
    row[h.len()] as f64 / r.len() as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalisation_ignores_case_punctuation_digits_and_abbreviations() {
        assert_eq!(
            normalise("Dr. Smith's train leaves every 20 minutes -- at 7:45!"),
            [
                "doctor", "smiths", "train", "leaves", "every", "twenty", "minutes", "at", "seven",
                "forty", "five"
            ]
        );
        assert_eq!(
            normalise("1,234"),
            ["one", "thousand", "two", "hundred", "thirty", "four"]
        );
    }

    #[test]
    fn wer_counts_each_kind_of_error() {
        assert_eq!(wer("the cat sat", "The cat sat."), 0.0);
        assert_eq!(wer("the cat sat", "the bat sat"), 1.0 / 3.0);
        assert_eq!(wer("the cat sat", "the cat"), 1.0 / 3.0);
        assert_eq!(wer("the cat sat", "the cat sat down"), 1.0 / 3.0);
        assert_eq!(wer("a b", ""), 1.0);
        assert_eq!(wer("every twenty minutes", "every 20 minutes"), 0.0);
    }
}
