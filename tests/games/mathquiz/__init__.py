"""MathQuiz: set an arithmetic word problem whose answer is a given target."""
