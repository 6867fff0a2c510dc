"""The deflate dictionary of formats 1 and 2 of a run's record (``lincls.tracking.record``): what
a record's heads usually hold — metric names, curves' steps, tags (the skipped bounds' reasons,
the bounds' sources), the margin histogram's text — then one whole head (the default perceptron
on 100 separable points), most alike last. A record deflated against it refers to these words
instead of spelling them: about half the bytes of one deflated alone.

Frozen: a record is inflated with the dictionary it was deflated with, so another dictionary is
another format (``record.FORMAT``), this one kept to read the records written with it.
``tests/test_record.py`` pins its digest. Made from the records of the documentation's probe
configs (``docs/_gen/logged.py``).
"""

TEXT = (
    '"fit_seconds","train_accuracy","radius","margin","certificate.svm.margin","certificate.svm.r'
    'adius","certificate.svm.gamma","certificate.svm.deficit","certificate.svm.gap","separable","'
    'updates","passes_run","converged","presented","bound_ratio.freund_schapire","bound.freund_sc'
    'hapire","bound_param.freund_schapire.radius","bound_param.freund_schapire.gap","bound_param.'
    'freund_schapire.gamma","bound_param.freund_schapire.margin","bound_param.freund_schapire.def'
    'icit","bound_ratio.mohri_rostamizadeh","bound.mohri_rostamizadeh","bound_param.mohri_rostami'
    'zadeh.rho","bound_param.mohri_rostamizadeh.radius","bound_param.mohri_rostamizadeh.gap","bou'
    'nd.novikoff_bias","bound_param.novikoff_bias.margin","bound_param.novikoff_bias.radius","bou'
    'nd_param.novikoff_bias.gap","bound.tightest_a_posteriori","bound_ratio.tightest_a_posteriori'
    '","bound_slack.progress","bound_slack.angle","bound_slack.norm","hyperplane.functional_margi'
    'n","hyperplane.norm","hyperplane.nonpositive","hyperplane.margin","hyperplane.margin_q05","h'
    'yperplane.margin_q25","hyperplane.margin_q50","hyperplane.margin_q75","hyperplane.margin_q95'
    '","hyperplane.max_margin","hyperplane.margin_to_max","mistakes_per_pass":[1,2,3,4,5,6,7,8,9,'
    '10],"cumulative_mistakes":[1,2,3,4,5,6,7,8,9,10,11,13,14,15,16,19,20,22,23,24,25,26,27,28,30'
    ",31,32,33,36,37,39,40,41,42,43,44,45,47,48,49,50,53,54,56,57,58,59,60,61,62,64,65,66,67,70,7"
    "1,73,74,75,76,77,78,79,81,82,83,84,87,88,90,91,92,93,94,95,96,98,99,100,101,104,105,107,108,"
    "109,110,111,112,113,115,116,117,118,121,122,124,125,126,127,128,129,130,132,133,134,135,138,"
    "139,141,142,143,144,145,146,147,149,150,151,152,155,156,158,159,160,161,162,163,164,166,167,"
    '168,169,170],"lemma.progress":[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,2'
    "4,25,26,27,28,29,30,31,32,33,34,35,36,37,38,39,40,41,42,43,44,45,46,47,48,49,50,51,52,53,54,"
    '55,56,57,58,59,60,61,62,63,64,65,66,67,68,69,70,71,72,73,74,75,76,77,78,79,80,81,82],"lemma.'
    'norm":[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31,3'
    "2,33,34,35,36,37,38,39,40,41,42,43,44,45,46,47,48,49,50,51,52,53,54,55,56,57,58,59,60,61,62,"
    '63,64,65,66,67,68,69,70,71,72,73,74,75,76,77,78,79,80,81,82],"cumulative_mistakes_bound":[1,'
    '170],"lemma.mistakes":[1,82],"order":"fixed","lincls.certificate":"svm","certificate.svm":"s'
    'eparates","bound.freund_schapire.certificate":"best","bound_source.freund_schapire":"not rea'
    "d: the form of Freund & Schapire 1999 (Machine Learning 37) Thm 2; the paper's statement was"
    ' not read and lincls does not prove it","bound.mohri_rostamizadeh.certificate":"best","bound'
    '_source.mohri_rostamizadeh":"not read: the form of Mohri & Rostamizadeh 2013 (arXiv:1305.020'
    '8) Thm 3; the paper\'s statement was not read and lincls does not prove it","bound.novikoff_'
    'bias.certificate":"best","bound_source.novikoff_bias":"derived: Novikoff (seed 000, Thm 1) o'
    'n the vectors (x, c); the reduction is in novikoff_bias\'s docstring","bound.tightest_a_post'
    'eriori":"mohri_rostamizadeh","bounds.vacuous":"novikoff_bias","bounds.skipped":"alma: not an'
    " ALMA learner; voted_fs99: not a voted perceptron predicting by vote or random draw; second_"
    "order: not a second-order perceptron; arow: not an AROW learner; cw: not a confidence-weight"
    "ed learner; scw1: not a confidence-weighted learner; scw2: not a confidence-weighted learner"
    "; forgetron: not a Forgetron; kernel_novikoff: not a kernel perceptron; margin_perceptron: n"
    "ot a margin perceptron; multiclass_perceptron: not a multiclass_perceptron learner; mira_pa1"
    "_kesler: not a mira learner; pa: not a passive-aggressive learner; pa1: not a passive-aggres"
    "sive learner; pa2: not a passive-aggressive learner; novikoff: the learner has a bias; novik"
    "off_2r: the learner's bias rule is not b += η·y·R²; projectron: not a Projectron; projectron"
    "_plus: not a Projectron; projectron_plus_paper: not a Projectron; romma: not a ROMMA learner"
    "; winnow2: not a Winnow learner (one weight vector, Winnow1 or Winnow2); winnow1: not a Winn"
    'ow learner (one weight vector, Winnow1 or Winnow2)","bound_slack.bound":"novikoff_bias","hyp'
    'erplane.max_margin.certificate":"svm","dataset.fingerprint":"8e3cbbcaffc5df02","test_accurac'
    'y","certificate.generator.margin","certificate.generator.radius","certificate.generator.gamm'
    'a","certificate.generator.deficit","support_size","bound.projectron","bound_param.projectron'
    '.comparator_norm","bound_param.projectron.hinge_sum","mistakes_per_pass":[1,2],"cumulative_m'
    'istakes":[1,2,3,4,8,9,11,12,13,14,21,22,23,28,29,30,32,33,34,57,58,59,60,76,77,78,79,95,96,9'
    '7,98,200],"support_size":[1,2,3,4,8,9,11,12,13,14,21,22,23,28,29,30,32,33,34,57,58,59,60,76,'
    '77,78,79,95,96,97,98,200],"lincls.certificate":"generator","certificate.generator":"separate'
    's","bound.projectron.certificate":"generator","bound_source.projectron":"derived: the exact '
    "root of the inequality in the proof of Orabona, Keshet & Caputo 2009 (JMLR 10) Thm 3, for η "
    'on δ² and R\' in place of k(x, x) ≤ 1; proof in the docstring","bounds.vacuous":"projectron"'
    ',"bounds.skipped":"alma: not an ALMA learner; freund_schapire: not a perceptron-family learn'
    "er; voted_fs99: not a voted perceptron predicting by vote or random draw; second_order: not "
    "a second-order perceptron; arow: not an AROW learner; cw: not a confidence-weighted learner;"
    " scw1: not a confidence-weighted learner; scw2: not a confidence-weighted learner; mohri_ros"
    "tamizadeh: not a perceptron-family learner; forgetron: not a Forgetron; kernel_novikoff: not"
    " a kernel perceptron; margin_perceptron: not a margin perceptron; multiclass_perceptron: not"
    " a multiclass_perceptron learner; mira_pa1_kesler: not a mira learner; pa: not a passive-agg"
    "ressive learner; pa1: not a passive-aggressive learner; pa2: not a passive-aggressive learne"
    "r; novikoff: not a perceptron-family learner; novikoff_bias: not a perceptron-family learner"
    "; novikoff_2r: not a perceptron-family learner; projectron_plus: the Projectron (plus=false)"
    "; projectron_plus_paper: the Projectron (plus=false); romma: not a ROMMA learner; winnow2: n"
    "ot a Winnow learner (one weight vector, Winnow1 or Winnow2); winnow1: not a Winnow learner ("
    'one weight vector, Winnow1 or Winnow2)","dataset.fingerprint":"1a4a697c6eb7e110","bound_rati'
    'o.second_order","bound.second_order","bound_param.second_order.gamma","bound_param.second_or'
    'der.deficit","bound_param.second_order.log_det","mistakes_per_pass":[1,2,3],"cumulative_mist'
    'akes":[1,2,3,4,8,9,13,14,21,22,29,30,33,34,38,39,53,54,72,73,82,83,84,91,92,127,128,300],"bo'
    'und.second_order.certificate":"svm","bound_source.second_order":"derived: proof sketched in '
    "its docstring, in the form of Cesa-Bianchi, Conconi & Gentile 2005 (SICOMP 34) Thm 1, whose "
    'statement was not read","bound.tightest_a_posteriori":"second_order","bounds.skipped":"alma:'
    " not an ALMA learner; freund_schapire: not a perceptron-family learner; voted_fs99: not a vo"
    "ted perceptron predicting by vote or random draw; arow: not an AROW learner; cw: not a confi"
    "dence-weighted learner; scw1: not a confidence-weighted learner; scw2: not a confidence-weig"
    "hted learner; mohri_rostamizadeh: not a perceptron-family learner; forgetron: not a Forgetro"
    "n; kernel_novikoff: not a kernel perceptron; margin_perceptron: not a margin perceptron; mul"
    "ticlass_perceptron: not a multiclass_perceptron learner; mira_pa1_kesler: not a mira learner"
    "; pa: not a passive-aggressive learner; pa1: not a passive-aggressive learner; pa2: not a pa"
    "ssive-aggressive learner; novikoff: not a perceptron-family learner; novikoff_bias: not a pe"
    "rceptron-family learner; novikoff_2r: not a perceptron-family learner; projectron: not a Pro"
    "jectron; projectron_plus: not a Projectron; projectron_plus_paper: not a Projectron; romma: "
    "not a ROMMA learner; winnow2: not a Winnow learner (one weight vector, Winnow1 or Winnow2); "
    'winnow1: not a Winnow learner (one weight vector, Winnow1 or Winnow2)","bound_ratio.novikoff'
    '_bias","test_error_bound.voted_fs99","test_error_bound_ratio.voted_fs99","mistakes_per_pass"'
    ':[1],"cumulative_mistakes":[1,2,3,4,8,9,11,12,13,14,21,22,23,28,29,30,32,33,34,57,58,59,60,7'
    '6,77,78,79,95,96,97,98,100],"lemma.progress":[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,1'
    '9,20],"lemma.norm":[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20],"cumulative_mistakes'
    '_bound":[1,100],"lemma.mistakes":[1,20],"test_error_bound.voted_fs99.certificate":"best","bo'
    'und_source.voted_fs99":"not covered: Freund & Schapire 1999 Thm 3 bounds an expectation over'
    ' samples; lincls logs a plug-in estimate from one sample (and the statement was not read)","'
    'bounds.skipped":"alma: not an ALMA learner; second_order: not a second-order perceptron; aro'
    "w: not an AROW learner; cw: not a confidence-weighted learner; scw1: not a confidence-weight"
    "ed learner; scw2: not a confidence-weighted learner; forgetron: not a Forgetron; kernel_novi"
    "koff: not a kernel perceptron; margin_perceptron: not a margin perceptron; multiclass_percep"
    "tron: not a multiclass_perceptron learner; mira_pa1_kesler: not a mira learner; pa: not a pa"
    "ssive-aggressive learner; pa1: not a passive-aggressive learner; pa2: not a passive-aggressi"
    "ve learner; novikoff: the learner has a bias; novikoff_2r: the learner's bias rule is not b "
    "+= η·y·R²; projectron: not a Projectron; projectron_plus: not a Projectron; projectron_plus_"
    "paper: not a Projectron; romma: not a ROMMA learner; winnow2: not a Winnow learner (one weig"
    "ht vector, Winnow1 or Winnow2); winnow1: not a Winnow learner (one weight vector, Winnow1 or"
    ' Winnow2)","hyperplane.rule":"the c-weighted mean of the voted vectors (the vote itself is n'
    'ot one hyperplane)","bound_ratio.multiclass_perceptron","bound.multiclass_perceptron","bound'
    '_param.multiclass_perceptron.margin","bound_param.multiclass_perceptron.radius","bound_param'
    '.multiclass_perceptron.gap","cumulative_mistakes":[1,2,3,6,7,12,13,14,15,200],"cumulative_mi'
    'stakes_bound":[1,200],"bound.multiclass_perceptron.certificate":"best","bound_source.multicl'
    'ass_perceptron":"derived: Kesler\'s construction, proved in its docstring, in the form of Cr'
    'ammer & Singer 2003 (JMLR 3) Thm 1, whose statement was not read","bounds.skipped":"alma: no'
    "t an ALMA learner; freund_schapire: not a perceptron-family learner; voted_fs99: not a voted"
    " perceptron predicting by vote or random draw; second_order: not a second-order perceptron; "
    "arow: not an AROW learner; cw: not a confidence-weighted learner; scw1: not a confidence-wei"
    "ghted learner; scw2: not a confidence-weighted learner; mohri_rostamizadeh: not a perceptron"
    "-family learner; forgetron: not a Forgetron; kernel_novikoff: not a kernel perceptron; margi"
    "n_perceptron: not a margin perceptron; mira_pa1_kesler: not a mira learner; pa: not a passiv"
    "e-aggressive learner; pa1: not a passive-aggressive learner; pa2: not a passive-aggressive l"
    "earner; novikoff: not a perceptron-family learner; novikoff_bias: not a perceptron-family le"
    "arner; novikoff_2r: not a perceptron-family learner; projectron: not a Projectron; projectro"
    "n_plus: not a Projectron; projectron_plus_paper: not a Projectron; romma: not a ROMMA learne"
    "r; winnow2: not a Winnow learner (one weight vector, Winnow1 or Winnow2); winnow1: not a Win"
    'now learner (one weight vector, Winnow1 or Winnow2)","dataset.fingerprint":"51e2fb20eafc2ed6'
    '","log_likelihood","iterations","log_likelihood_per_iteration":[0,1,2,3,4,5,6,7,8,9,10,11,12'
    '],"bounds.none":"not an online learner: no mistake bound applies","batches","cumulative_mist'
    'akes":[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,24,25,26,27,28,29,30,31,32,3'
    '3,46,47,48,49,70,71,72,73,82,83,112,113,300],"mistakes_per_batch":[1,2,3,4,5,6,7,8,9,10,11,1'
    '2,13,30],"bounds.skipped":"every bound: a batch perceptron with batch_size M > 1 steps on th'
    "e sum of a batch's mistakes: no mistake bound covers it (the perceptron's need M = 1)\",\"bo"
    'unds.none":"a batch perceptron with batch_size M > 1 steps on the sum of a batch\'s mistakes'
    ': no mistake bound covers it (the perceptron\'s need M = 1)","orders","mistakes_std","mistak'
    'es_min","mistakes_max","updates_std","bound_ratio.pa1","bound_ratio_mean.pa1","bound_ratio_s'
    'td.pa1","bound.pa1","bound_param.pa1.radius","bound_param.pa1.gap","bound_param.pa1.objectiv'
    'e","cumulative_mistakes":[1,4,5,6,7,8,9,15,16,21,22,23,24,26,27,46,47,48,49,57,58,99,100,100'
    '0],"cumulative_mistakes_bound":[1,1000],"order":"shuffled","bound.pa1.certificate":"best","b'
    'ound_source.pa1":"published: Crammer, Dekel, Keshet, Shalev-Shwartz & Singer 2006, JMLR 7, T'
    'hm 4 (read in the JMLR text)","bounds.skipped":"alma: not an ALMA learner; freund_schapire: '
    "not a perceptron-family learner; voted_fs99: not a voted perceptron predicting by vote or ra"
    "ndom draw; second_order: not a second-order perceptron; arow: not an AROW learner; cw: not a"
    " confidence-weighted learner; scw1: not a confidence-weighted learner; scw2: not a confidenc"
    "e-weighted learner; mohri_rostamizadeh: not a perceptron-family learner; forgetron: not a Fo"
    "rgetron; kernel_novikoff: not a kernel perceptron; margin_perceptron: not a margin perceptro"
    "n; multiclass_perceptron: not a multiclass_perceptron learner; mira_pa1_kesler: not a mira l"
    "earner; pa: the learner's variant is 'pa1', not 'pa'; pa2: the learner's variant is 'pa1', n"
    "ot 'pa2'; novikoff: not a perceptron-family learner; novikoff_bias: not a perceptron-family "
    "learner; novikoff_2r: not a perceptron-family learner; projectron: not a Projectron; project"
    "ron_plus: not a Projectron; projectron_plus_paper: not a Projectron; romma: not a ROMMA lear"
    "ner; winnow2: not a Winnow learner (one weight vector, Winnow1 or Winnow2); winnow1: not a W"
    'innow learner (one weight vector, Winnow1 or Winnow2)","certificate.soft_svm.margin","certif'
    'icate.soft_svm.radius","certificate.soft_svm.gamma","certificate.soft_svm.deficit","cumulati'
    've_mistakes":[1,2,3,4,6,7,11,12,13,14,15,16,20,21,22,23,28,29,30,31,33,34,38,39,40,41,42,43,'
    "44,45,46,47,48,50,51,53,54,57,58,59,68,69,72,73,75,76,77,79,80,81,84,85,87,88,92,93,94,95,96"
    ",100,101,102,103,104,105,106,110,111,112,120,121,122,123,127,128,129,130,131,137,138,140,141"
    ",143,144,148,153,159,164,170,176,183,189,196,203,210,217,225,233,241,249,258,267,277,287,297"
    ",307,318,329,341,353,365,378,392,406,420,435,450,466,482,499,517,535,554,574,594,615,637,659"
    ',683,707,732,758,784,812,841,870,901,933,966,1000],"certificate.generator":"does not separat'
    'e","certificate.soft_svm":"does not separate","bound.mohri_rostamizadeh.certificate":"genera'
    'tor","bounds.skipped":"alma: not an ALMA learner; voted_fs99: not a voted perceptron predict'
    "ing by vote or random draw; second_order: not a second-order perceptron; arow: not an AROW l"
    "earner; cw: not a confidence-weighted learner; scw1: not a confidence-weighted learner; scw2"
    ": not a confidence-weighted learner; forgetron: not a Forgetron; kernel_novikoff: not a kern"
    "el perceptron; margin_perceptron: not a margin perceptron; multiclass_perceptron: not a mult"
    "iclass_perceptron learner; mira_pa1_kesler: not a mira learner; pa: not a passive-aggressive"
    " learner; pa1: not a passive-aggressive learner; pa2: not a passive-aggressive learner; novi"
    "koff: the certificate does not separate the data; novikoff_bias: the certificate does not se"
    "parate the data; novikoff_2r: the certificate does not separate the data; projectron: not a "
    "Projectron; projectron_plus: not a Projectron; projectron_plus_paper: not a Projectron; romm"
    "a: not a ROMMA learner; winnow2: not a Winnow learner (one weight vector, Winnow1 or Winnow2"
    '); winnow1: not a Winnow learner (one weight vector, Winnow1 or Winnow2)","dataset.fingerpri'
    'nt":"abdd33cd59a3700c",{"v":1,"m":["fit_seconds","train_accuracy","test_accuracy","radius","'
    'margin","certificate.generator.margin","certificate.generator.radius","certificate.generator'
    '.gamma","certificate.generator.deficit","certificate.svm.margin","certificate.svm.radius","c'
    'ertificate.svm.gamma","certificate.svm.deficit","certificate.svm.gap","separable","updates",'
    '"passes_run","converged","presented","bound_ratio.freund_schapire","bound.freund_schapire","'
    'bound_param.freund_schapire.radius","bound_param.freund_schapire.gap","bound_param.freund_sc'
    'hapire.gamma","bound_param.freund_schapire.margin","bound_param.freund_schapire.deficit","bo'
    'und_ratio.mohri_rostamizadeh","bound.mohri_rostamizadeh","bound_param.mohri_rostamizadeh.rho'
    '","bound_param.mohri_rostamizadeh.radius","bound_param.mohri_rostamizadeh.gap","bound_ratio.'
    'novikoff_bias","bound.novikoff_bias","bound_param.novikoff_bias.margin","bound_param.novikof'
    'f_bias.radius","bound_param.novikoff_bias.gap","bound.tightest_a_posteriori","bound_ratio.ti'
    'ghtest_a_posteriori","bound_slack.progress","bound_slack.angle","bound_slack.norm","hyperpla'
    'ne.functional_margin","hyperplane.norm","hyperplane.nonpositive","hyperplane.margin","hyperp'
    'lane.margin_q05","hyperplane.margin_q25","hyperplane.margin_q50","hyperplane.margin_q75","hy'
    'perplane.margin_q95","hyperplane.max_margin","hyperplane.margin_to_max"],"c":{"mistakes_per_'
    'pass":[1,2],"cumulative_mistakes":[1,2,3,4,8,9,11,12,13,14,21,22,23,28,29,30,32,33,34,57,58,'
    '59,60,76,77,78,79,95,96,97,98,200],"lemma.progress":[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,'
    '17,18,19,20],"lemma.norm":[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20],"cumulative_m'
    'istakes_bound":[1,200],"lemma.mistakes":[1,20]},"t":{"order":"fixed","lincls.certificate":"g'
    'enerator","certificate.generator":"separates","certificate.svm":"separates","bound.freund_sc'
    'hapire.certificate":"best","bound_source.freund_schapire":"not read: the form of Freund & Sc'
    "hapire 1999 (Machine Learning 37) Thm 2; the paper's statement was not read and lincls does "
    'not prove it","bound.mohri_rostamizadeh.certificate":"best","bound_source.mohri_rostamizadeh'
    '":"not read: the form of Mohri & Rostamizadeh 2013 (arXiv:1305.0208) Thm 3; the paper\'s sta'
    'tement was not read and lincls does not prove it","bound.novikoff_bias.certificate":"best","'
    'bound_source.novikoff_bias":"derived: Novikoff (seed 000, Thm 1) on the vectors (x, c); the '
    'reduction is in novikoff_bias\'s docstring","bound.tightest_a_posteriori":"mohri_rostamizade'
    'h","bounds.skipped":"alma: not an ALMA learner; voted_fs99: not a voted perceptron predictin'
    "g by vote or random draw; second_order: not a second-order perceptron; arow: not an AROW lea"
    "rner; cw: not a confidence-weighted learner; scw1: not a confidence-weighted learner; scw2: "
    "not a confidence-weighted learner; forgetron: not a Forgetron; kernel_novikoff: not a kernel"
    " perceptron; margin_perceptron: not a margin perceptron; multiclass_perceptron: not a multic"
    "lass_perceptron learner; mira_pa1_kesler: not a mira learner; pa: not a passive-aggressive l"
    "earner; pa1: not a passive-aggressive learner; pa2: not a passive-aggressive learner; noviko"
    "ff: the learner has a bias; novikoff_2r: the learner's bias rule is not b += η·y·R²; project"
    "ron: not a Projectron; projectron_plus: not a Projectron; projectron_plus_paper: not a Proje"
    "ctron; romma: not a ROMMA learner; winnow2: not a Winnow learner (one weight vector, Winnow1"
    ' or Winnow2); winnow1: not a Winnow learner (one weight vector, Winnow1 or Winnow2)","bound_'
    'slack.bound":"novikoff_bias","hyperplane.max_margin.certificate":"svm","dataset.fingerprint"'
    ':"1a4a697c6eb7e110"},"f":{"hyperplane/margin_histogram.json":"{\\n \\"quantity\\": \\"geomet'
    'ric margin y(w·x + b)/‖w‖ of each training example\\",\\n \\"edges\\": [\\n  0.0301147624939'
    "0142,\\n  0.05692282535111637,\\n  0.08373088820833133,\\n  0.11053895106554627,\\n  0.13734"
    "701392276122,\\n  0.16415507677997618,\\n  0.1909631396371911,\\n  0.21777120249440607,\\n  "
    "0.24457926535162103,\\n  0.271387328208836,\\n  0.298195391066051,\\n  0.3250034539232659,\\"
    "n  0.35181151678048084,\\n  0.3786195796376958,\\n  0.40542764249491076,\\n  0.4322357053521"
    "2574,\\n  0.4590437682093407,\\n  0.4858518310665556,\\n  0.5126598939237705,\\n  0.53946795"
    '67809856,\\n  0.5662760196382005\\n ],\\n \\"counts\\": [\\n  1,\\n  6,\\n  3,\\n  5,\\n  8,'
    "\\n  5,\\n  10,\\n  14,\\n  10,\\n  7,\\n  5,\\n  4,\\n  7,\\n  2,\\n  4,\\n  5,\\n  0,\\n  "
    '1,\\n  1,\\n  2\\n ],\\n \\"examples\\": 100,\\n \\"margin\\": 0.03011476249390142,\\n \\"fu'
    'nctional_margin\\": 0.13995959984464057,\\n \\"norm\\": 4.647541214146516,\\n \\"intercept\\'
    '": 0.0,\\n \\"max_margin\\": 0.14823294995256944,\\n \\"max_margin_certificate\\": \\"svm\\"'
    '\\n}"}}'
)
DICTIONARY = TEXT.encode()
