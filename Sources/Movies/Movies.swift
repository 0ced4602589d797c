// Movies: the catalogue domain (Movie, MovieEvent, MovieCommand, MovieState).
