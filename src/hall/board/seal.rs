//! The board actor's custody of sealed moves (I.1.1, I.3, I.7): a sealed move is kept
//! encrypted before the rules see its commitment, and opened from custody.

use super::*;

impl BoardActor {
    /// Seal (or counter-seal) `mv`: a fresh nonce from the system's generator, the move
    /// and nonce kept encrypted (and on disk) before the rules see them, so no event
    /// ever names a commitment the custody cannot open. A refused seal is forgotten.
    pub(super) async fn seal_secret(
        &mut self,
        side: Option<Color>,
        mv: String,
        on_board: bool,
        counter: bool,
    ) -> Result<(), Refusal> {
        let nonce = crate::custody::fresh_nonce();
        let commitment =
            crate::rules::adjournment::commitment(&nonce, &mv).map_err(|e| Refusal::Internal {
                reason: e.to_string(),
            })?;
        let secret = Secret {
            mv: mv.clone(),
            nonce: nonce.clone(),
        };
        let custody = self.custody.clone();
        let key = commitment.clone();
        match tokio::task::spawn_blocking(move || custody.keep(&key, &secret)).await {
            Ok(Ok(())) => {}
            Ok(Err(e)) => {
                return Err(Refusal::SealNotKept {
                    reason: e.to_string(),
                });
            }
            Err(_) => return Err(Refusal::CustodyTaskFailed),
        }
        let input = if counter {
            Input::CounterSeal { mv, nonce }
        } else {
            Input::Seal {
                side,
                mv,
                nonce,
                on_board,
            }
        };
        let r = self.decide(input).await;
        if r.is_err() {
            self.custody.discard(&commitment);
        }
        r
    }

    /// I.7: open the waiting envelope with the move and nonce from custody. With no
    /// envelope waiting, the rules say why (an empty opening is refused by them).
    pub(super) async fn open_envelope(&mut self, arbiter: String) -> Result<(), Refusal> {
        let waiting = self.slot.as_ref().and_then(|s| {
            s.game.view(self.now()).adjournment.and_then(|a| {
                a.envelopes
                    .iter()
                    .rev()
                    .find(|e| e.status == EnvelopeStatus::Sealed)
                    .map(|e| e.commitment.clone())
            })
        });
        let secret = match waiting {
            None => Secret {
                mv: String::new(),
                nonce: String::new(),
            },
            Some(commitment) => {
                let custody = self.custody.clone();
                match tokio::task::spawn_blocking(move || custody.fetch(&commitment)).await {
                    Ok(Ok(secret)) => secret,
                    Ok(Err(e)) => {
                        return Err(Refusal::SealUnreadable {
                            reason: e.to_string(),
                        });
                    }
                    Err(_) => return Err(Refusal::CustodyTaskFailed),
                }
            }
        };
        self.decide(Input::OpenEnvelope {
            mv: secret.mv,
            nonce: secret.nonce,
            arbiter,
        })
        .await
    }

    pub(super) fn stage(&self) -> Option<Stage> {
        self.slot
            .as_ref()
            .and_then(|s| s.game.view(self.now()).adjournment.map(|a| a.stage))
    }
}
