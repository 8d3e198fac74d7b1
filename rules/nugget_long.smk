# The figures' and tables' NUGGET models beyond Table 2 used to train here with their own settings; they are
# now models of the one zoo (rules/nugget.smk, rule train_nugget; issue 18), which every table and figure
# reads through rules/common.smk (long_model_dir, long_model_files).
