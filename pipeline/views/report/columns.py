"""The column glossary: what every column of every table of the report means."""

from __future__ import annotations



from ...analysis import ALPHA, BETWEEN_DOMINATES, SHARE_INTERVAL_TEXT, MIN_COUNT


#: Definition of every table column (axes columns are the grid's own).
COLUMNS: dict[str, str] = {
    "replicates": "finished replicates behind the estimate",
    "exact": "the exact value (empty where none exists)",
    "reference": "what the estimate is compared with: 'exact' (the stored exact answer), 'replicate decks' "
                 "(mean of the exact answers of the deck orders each replicate played) or empty",
    "max_abs_z": "largest |z| over labels, z = (estimate - reference) / s.e. (labels with s.e. 0 or a mean "
                 f"count below {MIN_COUNT} per replicate left out)",
    "worst_label": "the label with that largest |z|",
    "max_abs_error": "max |error|: largest |estimate - reference| over labels (frequency units)",
    "tv_distance": "TV distance: total variation distance sum |estimate - reference| / 2",
    "slope": "log-log slope of the error (basis) of each checkpoint increment against its steps, on the upper "
             "half of the log range; "
             "-1/2 expected",
    "slope_low": "lower end of the slope's 95% interval, slope - t_0.975(df) s.e. (fitted on independent "
                 "checkpoint increments, df = points - 2)",
    "slope_high": "upper end of the slope's 95% interval; -1/2 inside it is the Monte Carlo rate",
    "basis": "what the slope is fitted to: 'rms_error' (RMS error of each increment's frequency against the "
             "exact answer of that stretch) or 'sd' (RMS across-replicate sd of the increments' frequencies, "
             "where no exact answer exists)",
    "variance_ratio": "points.csv: median over labels (each label's in variance.csv) of measured across-replicate "
                      "variance / Markov-chain CLT variance "
                      "(a variance from R replicates is sigma^2 chi2(R-1)/(R-1), whose median is 0.79 for R = 4 "
                      "and 0.91 for R = 8: that, not 1, is the reference)",
    "variance_ratio_low": "lower end of the variance ratio's 95% interval: the measured variance has replicates - 1 "
                          "degrees of freedom, ratio (R-1) / chi2_0.975(R-1)",
    "variance_ratio_high": "upper end of the variance ratio's 95% interval, ratio (R-1) / chi2_0.025(R-1)",
    "heterogeneity_p": "p of the test that the replicates estimate one frequency: weighted one-way ANOVA of the "
                       "checkpoint batches, F(R-1, R(B-1)); empty below 10 counts per replicate",
    "heterogeneity_p_holm": "heterogeneity_p adjusted by Holm over every label and grid point of the store",
    "replicates_disagree": "the replicate-disagreement flag: heterogeneity_p_holm below 1% (family-wise: a correct "
                           "sweep shows it anywhere at most 1% of the time); empty where not tested",
    "rhat": "arviz's rank-normalised split R-hat of the equal-batch series (one chain per replicate); its 99% "
            "reference for this many chains and batches is about 1.02 at 8 x 64, not 1.01 (see the statistics "
            "page); the flag is replicates_disagree; empty for a store without series (format 6 and older)",
    "ess_bulk": "arviz's bulk effective sample size of the equal-batch series: about replicates x batches "
                "where batches are independent; empty for a store without series",
    "between_share_low": "lower end of the between share's 95% interval (between_share_interval says which): the "
                         "one-way ANOVA's on equal batches, 1 - F_0.975(R-1, R(K-1)) / anova_F; empty without "
                         "equally spaced checkpoints",
    "between_share_high": "upper end of the between share's 95% interval, 1 - F_0.025(R-1, R(K-1)) / anova_F",
    "between_share_interval": "the kind of between_share_low..high: "
                              + "; ".join(f"'{k}': {v}" for k, v in SHARE_INTERVAL_TEXT.items()),
    "anova_share": "the between share by the one-way ANOVA on equal batches (replicates as groups, K batches "
                   "each): 1 - 1 / anova_F, no exact answers used",
    "anova_F": "the ANOVA's F = MS_between / MS_within of the batch frequencies",
    "batch_means_ratio": "mean of each replicate's batch-means variance / CLT variance",
    "modal": "the game's short name of the most frequent labels (Monopoly: PE84's modal string, IN_JAIL "
             "merged into JAIL)",
    "top3": "the three most frequent labels",
    "label": "the label (location, rolls bin, seat, ...)",
    "name": "the label's full name",
    "estimate": "the estimate: ratio of sums over the finished replicates at the last checkpoint",
    "se": "standard error of the estimate ('units': pooled per game; 'replicates': from the spread of the "
          "replicates; see se_basis)",
    "low": "lower end of the 95% interval: estimate - t(0.975, df) s.e. (t interval); a share or histogram "
           "bin: the exact binomial (Clopper-Pearson) lower end; a frequency whose label averages few counts a "
           "replicate: the count interval's (the headline's interval: report.json, headlines.<name>.interval)",
    "high": "upper end of the 95% interval: estimate + t(0.975, df) s.e. (t interval), or the exact binomial or "
            "count interval's upper end, as for low",
    "z": "(estimate - exact) / s.e. (in frequencies.csv: (estimate - reference) / s.e.)",
    "comparison": "the axis compared and its two values a vs b, every other axis equal",
    "labels_tested": "labels tested: labels with a finite Welch test (both sides have >= 2 replicates)",
    "significant": f"labels whose Holm-adjusted p < {ALPHA} (the verdict's level; Holm over the labels "
                   "of the comparison)",
    "min_p_holm": "smallest Holm-adjusted p-value over the labels of the comparison (Holm's adjustment "
                  "multiplies the k-th smallest of m p-values by m - k + 1, keeping the order, at most 1)",
    "max_abs_difference": "largest |frequency(a) - frequency(b)| over labels",
    "at_label": "the label of that largest difference",
    "relative_difference": "that difference over frequency(b): (a - b) / b at that label (no Cohen's d: an sd "
                           "across replicates shrinks as runs grow, so difference / sd measures run size, "
                           "not effect)",
    "t_at_label": "Welch's t of that difference (difference / its standard error)",
    "total_var": "total across-replicate variance of the label's frequency",
    "between_var": "variance of the replicates' own exact answers (deck shuffles): the between-deck part",
    "sampling_var": "mean within-replicate sampling variance: the within-deck part, which more turns shrink",
    "within_var": "mean within-replicate sampling variance: the within-deck part, which more turns shrink",
    "between_share": "between / (between + sampling), per label (variance.csv, decomposition.csv); at least "
                     f"{BETWEEN_DOMINATES} means more turns will not shrink the error, only replicates",
    "paired_sd": "s.d. of the paired differences: each replicate's frequency minus the exact answer of its own "
                 "deck orders (the deck check's s.e. is this over sqrt(replicates), not the total replicate s.d.)",
    "paired_t": "paired t = mean difference / (paired_sd / sqrt(replicates)), df = replicates - 1",
    "paired_p": "two-sided p of paired_t before Holm's adjustment (the deck check adjusts over its own tests)",
    "replicate_sd": "s.d. of the replicates' own ratios (ddof 1)",
    "mcse": "Monte Carlo standard error on the replicates (arviz's mcse of the mean): replicate_sd / "
            "sqrt(replicates)",
    "units": "the summed denominator: games, events or turns",
    "ess": "effective sample size (arviz's N / tau): unit variance / mcse^2, the unit variance f (1 - f) of a "
           "frequency per event or the per-game variance; empty for a mean with no per-unit variance",
    "ess_per_unit": "ess / units: 1 / tau (1 for independent units, below 1 for a correlated chain)",
    "clt_variance": "the exact asymptotic (CLT) variance per unit of the store's per variable (Monopoly: per roll)",
    "clt_sd": "the replicate s.d. the exact CLT variance predicts: sqrt(mean over replicates of clt_variance / rolls)",
    "deck_difference": "mean over replicates of frequency - exact answer of the replicate's own deck orders",
    "deck_sd": "s.d. of those paired differences",
    "deck_t": "paired t: deck_difference / (deck_sd / sqrt(replicates))",
    "deck_df": "replicates - 1",
    "deck_p": "two-sided p of deck_t (raw, before any adjustment)",
    "more_turns": "whether more turns shrink this label's error: 'will not shrink it (between deck orders)' where "
                  f"between_share >= {BETWEEN_DOMINATES}",
    "headline": "the game's headline quantity (Game.headlines)",
    "sd": "per game ('units': sd of one game's value) or of one replicate's estimate ('replicates')",
    "df": "degrees of freedom of the t quantile and test: games - 1 ('units') or replicates - 1 ('replicates')",
    "test_df": "degrees of freedom of that test (chi2: merged bins - 1; t: as df; skew_t: se_df, the s.e.'s df "
               "from the games' kurtosis; z: inf)",
    "labels": "labels with an estimate (bins that nothing fell in and that cannot occur left out)",
    "worst_estimate": "the estimate at worst_label",
    "worst_exact": "the exact value at worst_label",
    "level": "level of the interval low..high",
    "se_basis": "'units': pooled per-game s.e. from stored sums of squares; 'replicates': from the spread of "
                "the replicates",
    "test": "'t': (estimate - exact) / s.e. against Student's t with test_df; 'z': the CLT z test, against the "
            "normal with the exact CLT s.e. (known, df inf); 'skew_t': Hall's test of a skewed mean, the "
            "interval's own (g(z) against t with test_df = se_df); 'binomial': the exact binomial test of a "
            "share (games with the outcome, doubled smaller tail); 'chi2': Pearson goodness of fit of the pooled "
            "histogram counts, bins merged to expected counts >= 5",
    "statistic": "z (t, z and skew_t tests: (estimate - exact) / s.e.; binomial: the normal deviate of its p, "
                 "signed like estimate - exact) or X^2 (chi-square)",
    "p": "p-value of the test before Holm's adjustment (two-sided for t); a small p alone is no disagreement: "
         "with many tests some are small by chance",
    "family": "'verdict': the store's tests, Holm-adjusted together (the verdict run and query print); "
              "'deck check': the report's comparison of points without a single exact answer with their "
              "replicates' own deck orders, Holm-adjusted among themselves, not part of the verdict",
    "detectable": "the bias (in the estimate's units) this test detects with 80% power at Holm's least "
                  "level, alpha / tests, two-sided, with its df and s.e., averaged over the estimated s.e.'s "
                  "sampling spread (exact where the s.e. is known, df = inf)",
    "p_holm": f"Holm-adjusted p-value over every test of its family (see family; the verdict's: every test of the "
              f"store, as run and query adjust it; the k-th smallest of "
              f"m p-values times m - k + 1, keeping the order, at most 1); below {ALPHA} the verdict "
              "flags it. Empty in headlines.csv where the row's test is its distribution's goodness of fit "
              "(see distributions.csv)",
    "replicates_used": "replicates the precision rule used at this grid point",
    "stderr_reached": "largest standard error of the game's estimates over them",
    "stderr_target": "the [precision] stderr target",
    "precision": "met: target reached; capped: max_replicates reached first; running: not finished",
}


#: Definitions that differ by table.
_TABLE_DEFINITIONS: dict[str, dict[str, str]] = {
    "points": {"exact": "exact answer: 'stored', 'none' (no single exact answer exists) or 'pending' (not "
                        "computed yet)"},
    "frequencies": {"exact": "the value the estimate is compared with (see reference; empty where none exists)",
                    "df": "degrees of freedom of the t quantile"},
    "variance": {"variance_ratio": "this label's replicate_sd^2 / clt_sd^2: chi2(R-1)/(R-1) if the CLT variance "
                                   "holds (90% range drawn in variance_ratio.png)",
                 "estimate": "the headline's estimate (ratio of sums over the finished replicates)",
                 "se": "the headline's standard error (pooled per game where the store has sums of squares; "
                       "else as mcse)"},
    "distributions": {"top3": "the three labels with the largest estimates, each with its estimate",
                      "test": "the verdict's test of this distribution: 'chi2' (goodness of fit) or the "
                              "per-label test with the smallest p ('t, 40 labels': 40 labels tested by t; "
                              "'z, 40 labels': by the CLT z test)",
                      "statistic": "X^2 (chi2) or z of that label (t, z)",
                      "p": "p-value of that test before Holm's adjustment"},
}


TABLE_COLUMNS = {
    "points": ["replicates", "exact", "reference", "max_abs_z", "worst_label", "max_abs_error",
               "tv_distance", "slope", "slope_low", "slope_high", "basis", "variance_ratio", "batch_means_ratio", "modal", "top3"],
    "frequencies": ["label", "name", "estimate", "se", "low", "high", "df", "exact", "reference", "z"],
    "comparisons": ["comparison", "labels_tested", "significant", "min_p_holm", "max_abs_difference",
                    "at_label", "relative_difference", "t_at_label"],
    "decomposition": ["label", "total_var", "between_var", "sampling_var", "between_share", "between_share_low",
                      "between_share_high", "between_share_interval", "paired_sd", "paired_t", "paired_p"],
}


def define(table: str, column: str) -> str:
    """The definition of ``column`` in ``table`` (a grid axis where none is written)."""
    return _TABLE_DEFINITIONS.get(table, {}).get(column) or COLUMNS.get(column, "grid axis")
