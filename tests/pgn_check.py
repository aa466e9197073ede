"""Reads PGN on stdin with python-chess and prints, as one JSON list, per game: the parse
errors, the tags, the final FEN after replaying the main line, and each move's SAN,
%clk and %emt (seconds, or null). The Rust tests compare these with the daemon's own
values (tests/pychess/mod.rs)."""

import io
import json
import sys

import chess.pgn


def main() -> None:
    text = sys.stdin.read()
    stream = io.StringIO(text)
    games = []
    while True:
        game = chess.pgn.read_game(stream)
        if game is None:
            break
        board = game.board()
        moves = []
        for node in game.mainline():
            moves.append(
                {
                    "san": board.san(node.move),
                    "clk": node.clock(),
                    "emt": node.emt(),
                    "comment": node.comment,
                }
            )
            board.push(node.move)
        games.append(
            {
                "errors": [str(e) for e in game.errors],
                "tags": dict(game.headers),
                "fen": board.fen(),
                "intro": game.comment,
                "moves": moves,
            }
        )
    json.dump(games, sys.stdout)


if __name__ == "__main__":
    main()
