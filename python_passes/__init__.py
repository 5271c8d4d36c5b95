"""python_passes"""
