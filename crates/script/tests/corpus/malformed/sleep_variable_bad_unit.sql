\sleep :t minutes
