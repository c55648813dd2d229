"""The reader model's data and recipe: questions with the sentences that answer them, their
twins, and the cross-encoder trained on them (`python -m rag.eval.reader --help`).

It lives with the evals, not in the library, because it reads the question bank's splits to
keep every dev and test paper out of the training data; the library only loads the weights.
"""
